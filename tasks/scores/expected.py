"""Expected-score files: ``tasks/scores/expected/<profile>.yaml`` (package data).

Format::

    profile: smoke
    tolerance:
      default: 0.0001          # absolute, in the metric's own unit (accuracies are in %)
      by_key:                  # optional: first matching glob wins
        "retrieval_dense.json#/*": 0.01
    ignore:                    # globs of keys that are not scores -> why
      "retrieval_paraphrased.json#/note": names a run-specific path
    scores:
      "retrieval_bm25.json#/macro/top20": 61.5
      ...
    packages:                  # the versions these numbers were pinned with (written by
      numpy: 2.4.6             # --update; tasks/scores/environment.py)
      ...

:func:`updated_expected` makes the next version from a metrics directory, keeping the previous
file's tolerance and ignore globs; :func:`write_expected` writes it atomically. Given the previous
file's text, it keeps that file's settings block (everything above ``scores:``, comments included)
word for word when the settings are unchanged: the comments that say why a tolerance is there
survive an update. Comments among the scores are not kept (the scores are regenerated), and
``packages`` is written after them, afresh on every update.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from tasks.io.atomic import write_text
from tasks.scores.compare import DEFAULT_TOLERANCE, ExpectedScores, Tolerance
from tasks.scores.metrics import Scalar

EXPECTED_DIR = Path(__file__).with_name("expected")
#: Settings of a profile's first expected file (later updates keep the file's own).
FIRST_SETTINGS = ExpectedScores(
    profile="", scores={},
    tolerance=Tolerance(DEFAULT_TOLERANCE, by_key=(
        ("paraphrase.json#/paraphraser/final_*_loss", 0.01),  # float training, CPU kernels
    )),
    ignore={"retrieval_paraphrased.json#/note": "names a run-specific path"},
)


class ExpectedScoresError(ValueError):
    """An expected-score file that does not have the documented shape."""


def expected_path(profile: str) -> Path:
    """The packaged expected-score file of a profile (present or not)."""
    return EXPECTED_DIR / f"{profile}.yaml"


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ExpectedScoresError(f"{where}: expected a number >= 0, got {value!r}")
    return float(value)


def parse_expected(raw: Any, source: str) -> ExpectedScores:
    """Validate the YAML content of an expected-score file (``source`` names it in errors)."""
    if not isinstance(raw, dict):
        raise ExpectedScoresError(f"{source}: expected a mapping with profile, tolerance, "
                                  f"ignore, scores; got {type(raw).__name__}")
    unknown = set(raw) - {"profile", "tolerance", "ignore", "scores", "packages"}
    if unknown:
        raise ExpectedScoresError(f"{source}: unknown keys {sorted(unknown)}")
    profile, scores = raw.get("profile"), raw.get("scores")
    if not isinstance(profile, str) or not profile:
        raise ExpectedScoresError(f"{source}: `profile` must be a profile name")
    if not isinstance(scores, dict):
        raise ExpectedScoresError(f"{source}: `scores` must map metric keys to values")
    for key, value in scores.items():
        if isinstance(value, dict | list):
            raise ExpectedScoresError(f"{source}: scores[{key!r}]: expected a scalar")
    tolerance_raw = raw.get("tolerance") or {}
    if not isinstance(tolerance_raw, dict) or set(tolerance_raw) - {"default", "by_key"}:
        raise ExpectedScoresError(f"{source}: `tolerance` takes `default` and `by_key`")
    by_key = tolerance_raw.get("by_key") or {}
    if not isinstance(by_key, dict):
        raise ExpectedScoresError(f"{source}: `tolerance.by_key` must map globs to numbers")
    tolerance = Tolerance(
        default=_number(tolerance_raw.get("default", DEFAULT_TOLERANCE),
                        f"{source}: tolerance.default"),
        by_key=tuple((str(k), _number(v, f"{source}: tolerance.by_key[{k!r}]"))
                     for k, v in by_key.items()))
    ignore = raw.get("ignore") or {}
    if not isinstance(ignore, dict) or not all(isinstance(g, str) for g in ignore):
        raise ExpectedScoresError(f"{source}: `ignore` must map globs to the reason")
    return ExpectedScores(profile=profile, scores={str(k): v for k, v in scores.items()},
                          tolerance=tolerance, ignore={g: str(why) for g, why in ignore.items()},
                          packages=parse_packages(raw.get("packages"), source))


def parse_packages(raw: Any, source: str) -> dict[str, str]:
    """The ``packages`` mapping of an expected or variant file (name -> version string)."""
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(
            isinstance(name, str) and isinstance(version, str) and version
            for name, version in raw.items()):
        raise ExpectedScoresError(f"{source}: `packages` must map package names to version "
                                  "strings, e.g. numpy: '2.4.6'")
    return dict(raw)


def dump_packages(packages: Mapping[str, str]) -> str:
    """The ``packages:`` block of an expected or variant file ('' when there are none)."""
    if not packages:
        return ""
    return yaml.safe_dump({"packages": {name: str(version) for name, version in
                                        sorted(packages.items())}},
                          sort_keys=False, allow_unicode=True, width=100)


def load_expected(path: Path) -> ExpectedScores:
    """Read and validate one expected-score file."""
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ExpectedScoresError(f"{path}: not valid YAML ({exc})") from None
    return parse_expected(raw, str(path))


def updated_expected(actual: Mapping[str, Scalar], profile: str,
                     previous: ExpectedScores | None = None,
                     packages: Mapping[str, str] | None = None) -> ExpectedScores:
    """Expected scores equal to ``actual`` (ignored keys left out), keeping ``previous``'s
    tolerance and ignore globs (:data:`FIRST_SETTINGS` without a previous file), recording
    ``packages`` (the versions installed now) as those they were pinned with."""
    base = previous or FIRST_SETTINGS
    scores = {key: value for key, value in actual.items() if not base.ignores(key)}
    return ExpectedScores(profile=profile, scores=scores, tolerance=base.tolerance,
                          ignore=base.ignore, packages=dict(packages or {}))


def _header(profile: str) -> str:
    return (
        f"# Expected scores of the `{profile}` profile: every number of metrics/*.json after\n"
        f"# `qastress run --profile {profile}`, checked by `qastress check-scores --profile "
        f"{profile}`.\n"
        "# Keys: <metrics file>#<JSON pointer>. `regressed` = outside the tolerance either way.\n"
        "# A changed number fails the check until this file is regenerated deliberately:\n"
        f"#   qastress run --profile {profile} && "
        f"qastress check-scores --profile {profile} --update\n")


def settings_block(text: str) -> str | None:
    """The part of an expected file's text above its top-level ``scores:`` line (header,
    profile, tolerance, ignore and their comments); None without such a line."""
    lines = text.splitlines(keepends=True)
    for number, line in enumerate(lines):
        if line.rstrip() == "scores:" or line.startswith("scores: "):
            return "".join(lines[:number])
    return None


def _same_settings(block: str, expected: ExpectedScores) -> bool:
    try:
        raw = yaml.safe_load(block) or {}
        kept = parse_expected({**raw, "scores": {}}, "settings")
    except (yaml.YAMLError, ExpectedScoresError, TypeError):
        return False
    return (kept.profile, kept.tolerance, kept.ignore) == (
        expected.profile, expected.tolerance, expected.ignore)


def dump_expected(expected: ExpectedScores, previous_text: str | None = None) -> str:
    """The YAML text of an expected-score file, with a header saying how to regenerate it.

    With ``previous_text`` (the file being replaced) whose settings equal ``expected``'s, its
    settings block is kept as written, comments included; otherwise the settings are written
    afresh.
    """
    scores = yaml.safe_dump({"scores": dict(expected.scores)}, sort_keys=False,
                            allow_unicode=True, width=100)
    block = settings_block(previous_text) if previous_text is not None else None
    packages = dump_packages(expected.packages)
    if block is not None and _same_settings(block, expected):
        return block + scores + packages
    settings = {
        "profile": expected.profile,
        "tolerance": {"default": expected.tolerance.default,
                      "by_key": dict(expected.tolerance.by_key)},
        "ignore": dict(expected.ignore),
    }
    return (_header(expected.profile)
            + yaml.safe_dump(settings, sort_keys=False, allow_unicode=True, width=100) + scores
            + packages)


def write_expected(path: Path, expected: ExpectedScores) -> Path:
    """Write an expected-score file atomically; the file it replaces keeps its settings block
    (with its comments) when the settings are unchanged."""
    path = Path(path)
    previous = path.read_text(encoding="utf-8") if path.is_file() else None
    return write_text(path, dump_expected(expected, previous))
