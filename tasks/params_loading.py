"""Loading ``params.yaml`` into the typed configuration (:class:`tasks.config.Params`).

:func:`load_params` reads the file (``params.yaml``, or ``$QASTRESS_PARAMS``), and
:func:`resolve_params` merges the selected profile (``profiles.<name>``, over the profile it
``extends``) and dotted overrides over the base sections and validates the result. Every problem
(no file, broken YAML, an unknown profile, an unknown or ill-typed key) is one
:class:`ParamsError` naming the file and the key.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from tasks.config import PROFILES, Params

DEFAULT_PARAMS_FILE = "params.yaml"


class ParamsError(ValueError):
    """``params.yaml`` (or an override) is invalid; the message names the key."""


def _deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _set_dotted(tree: dict[str, Any], dotted: str, value: Any) -> None:
    node = tree
    *parents, leaf = dotted.split(".")
    for part in parents:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise ParamsError(f"override {dotted!r}: {part!r} is not a section")
    node[leaf] = value


def profile_overlay(profiles: dict[str, Any], name: str, source: str = "params"
                    ) -> dict[str, Any]:
    """The sections profile ``name`` overrides: its own, merged over those of the profile it
    ``extends`` (recursively); an unknown or circular ``extends`` is a :class:`ParamsError`."""
    chain: list[str] = []
    while True:
        if name in chain:
            raise ParamsError(f"{source}: profiles extend each other in a circle: "
                              f"{' -> '.join([*chain, name])}")
        chain.append(name)
        overlay = profiles.get(name) or {}
        if not isinstance(overlay, dict):
            raise ParamsError(f"{source}: profiles.{name} must be a mapping of sections")
        parent = overlay.get("extends")
        if parent is None:
            break
        if parent not in profiles:
            raise ParamsError(f"{source}: profiles.{name}.extends names {parent!r}, which is "
                              f"not a profile of the file ({sorted(profiles)})")
        name = parent
    merged: dict[str, Any] = {}
    for link in reversed(chain):
        own = {k: v for k, v in (profiles.get(link) or {}).items() if k != "extends"}
        merged = _deep_merge(merged, own)
    return merged


def resolve_params(raw: dict[str, Any], profile: str | None = None,
                   overrides: dict[str, Any] | None = None, source: str = "params") -> Params:
    """Merge ``raw['profiles'][profile]`` and dotted ``overrides`` over the base; validate."""
    raw = dict(raw or {})
    profiles = raw.pop("profiles", {}) or {}
    chosen = profile or raw.get("profile") or "demo"
    if chosen not in PROFILES:
        asked = "" if profile is None else " (asked for by --profile or $QASTRESS_PROFILE)"
        raise ParamsError(f"{source}: profile must be one of {PROFILES}, not {chosen!r}{asked}")
    merged = _deep_merge(raw, profile_overlay(profiles, chosen, source))
    merged["profile"] = chosen
    for dotted, value in (overrides or {}).items():
        _set_dotted(merged, dotted, value)
    try:
        return Params.model_validate(merged)
    except ValidationError as exc:
        def where(loc: tuple) -> str:
            dotted = ".".join(str(p) for p in loc)
            given = [key for key in overrides or {} if dotted == key
                     or dotted.startswith(key + ".") or key.startswith(dotted + ".")]
            return f"{dotted} (set to {overrides[given[0]]!r} by an override)" if given else dotted

        problems = "; ".join(f"{where(err['loc'])}: {err['msg']}" for err in exc.errors())
        raise ParamsError(f"{source} (profile {chosen!r}): {problems}") from None


def load_params(path: str | Path | None = None, profile: str | None = None,
                overrides: dict[str, Any] | None = None) -> Params:
    """Read ``params.yaml`` (or ``$QASTRESS_PARAMS``), apply the profile, validate.

    ``profile`` defaults to ``$QASTRESS_PROFILE``, then the file's ``profile`` key, then demo.
    A missing file is a :class:`ParamsError`: the profiles live in the file, so defaults
    alone would run another study than the one asked for (e.g. ``smoke`` at demo size).
    """
    given = path or os.environ.get("QASTRESS_PARAMS")
    path = Path(given or DEFAULT_PARAMS_FILE)
    profile = profile or os.environ.get("QASTRESS_PROFILE") or None
    if not path.is_file():
        hint = ("" if given else f" in {Path.cwd()}: run from the project root (where "
                "params.yaml is), or pass --params FILE (or set $QASTRESS_PARAMS)")
        raise ParamsError(f"{path}: no such params file{hint}")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ParamsError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except yaml.YAMLError as exc:
        raise ParamsError(f"{path}: not valid YAML{_yaml_place(exc)}") from None
    except RecursionError:
        raise ParamsError(f"{path}: nested deeper than the YAML parser follows (a params file "
                          "nests a few levels)") from None
    if raw is None:
        raise ParamsError(f"{path}: the params file is empty (expected its sections and "
                          "profiles: start from the project's params.yaml)")
    if not isinstance(raw, dict):
        raise ParamsError(f"{path}: expected a mapping of sections at the top level")
    _check_profile_present(raw, profile, path)
    return resolve_params(raw, profile=profile, overrides=overrides, source=str(path))


def _yaml_place(exc: yaml.YAMLError) -> str:
    """`` at line L, column C: problem`` of a YAML error (one line; without a mark, its text
    on one line)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    if mark is None or problem is None:
        return f" ({' '.join(str(exc).split())})"
    return f" at line {mark.line + 1}, column {mark.column + 1}: {problem}"


def _check_profile_present(raw: dict[str, Any], profile: str | None, path: Path) -> None:
    """A profile must be one of the file's ``profiles`` when the file has them, and when
    ``--profile`` (or ``$QASTRESS_PROFILE``) asks for one; unless the file names it as its
    own ``profile``. The base sections alone would run another study (e.g. ``smoke`` at demo
    size). A file without ``profiles`` and without a profile asked for is its own study."""
    chosen = profile or raw.get("profile") or "demo"
    profiles = raw.get("profiles") or {}
    if not profiles and profile is None:
        return
    if chosen in PROFILES and chosen not in profiles and raw.get("profile") != chosen:
        have = ", ".join(sorted(profiles)) or "none"
        raise ParamsError(f"{path}: profile {chosen!r} is not in the file's profiles ({have}):"
                          " add it under profiles:, or name it as the file's own profile "
                          f"(profile: {chosen})")
