"""Compare metrics with expected scores: each number is equal, within tolerance or regressed.

*Regressed* means outside the tolerance in either direction: a better number is as much a
change as a worse one, and needs a deliberate update of the expected file. Keys only in the
expected scores are *missing*, keys only in the metrics are *new*; keys matching an ``ignore``
pattern (e.g. timings) are *ignored* and counted. The check passes when every number is equal,
within tolerance or ignored.
"""

from __future__ import annotations

import fnmatch
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from tasks.scores.metrics import Scalar

Status = Literal["equal", "within", "regressed", "missing", "new", "ignored"]
STATUSES: tuple[Status, ...] = ("equal", "within", "regressed", "missing", "new", "ignored")
PASSING: frozenset[Status] = frozenset({"equal", "within", "ignored"})
#: Absolute tolerance when a file names none: above float noise (CPU math, summation order),
#: below the smallest real change of a percentage on the smoke profile (one question).
DEFAULT_TOLERANCE = 1e-4


@dataclass(frozen=True)
class Tolerance:
    """Absolute tolerance: ``default``, or that of the first ``by_key`` glob matching a key."""

    default: float = DEFAULT_TOLERANCE
    by_key: tuple[tuple[str, float], ...] = ()

    def for_key(self, key: str) -> float:
        """The tolerance of one metric key."""
        for pattern, value in self.by_key:
            if fnmatch.fnmatchcase(key, pattern):
                return value
        return self.default


@dataclass(frozen=True)
class ExpectedScores:
    """The expected numbers of one profile, with their tolerance, ignored key globs (glob ->
    why it is not a score, e.g. a run-specific path) and the package versions they were pinned
    with (name -> version; empty for files pinned before versions were recorded)."""

    profile: str
    scores: Mapping[str, Scalar]
    tolerance: Tolerance = field(default_factory=Tolerance)
    ignore: Mapping[str, str] = field(default_factory=dict)
    packages: Mapping[str, str] = field(default_factory=dict)

    def ignores(self, key: str) -> bool:
        """Whether ``key`` matches an ``ignore`` glob."""
        return any(fnmatch.fnmatchcase(key, pattern) for pattern in self.ignore)


@dataclass(frozen=True)
class Finding:
    """One metric key's verdict."""

    key: str
    status: Status
    expected: Scalar = None
    actual: Scalar = None
    tolerance: float = 0.0

    @property
    def delta(self) -> float | None:
        """actual - expected, for two numbers."""
        if _is_number(self.expected) and _is_number(self.actual):
            return float(self.actual) - float(self.expected)  # type: ignore[arg-type]
        return None


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def classify(expected: Scalar, actual: Scalar, tolerance: float) -> Status:
    """``equal``, ``within`` (numbers at most ``tolerance`` apart) or ``regressed``."""
    if _is_number(expected) and _is_number(actual):
        a, b = float(expected), float(actual)  # type: ignore[arg-type]
        if a == b or (math.isnan(a) and math.isnan(b)):
            return "equal"
        return "within" if abs(a - b) <= tolerance else "regressed"
    same = expected == actual and type(expected) is type(actual)
    return "equal" if same else "regressed"


def compare(expected: ExpectedScores, actual: Mapping[str, Scalar]) -> list[Finding]:
    """One finding per key of either side: expected keys in their order, then new ones."""
    findings = []
    for key, value in expected.scores.items():
        if expected.ignores(key):
            findings.append(Finding(key, "ignored", value, actual.get(key)))
        elif key not in actual:
            findings.append(Finding(key, "missing", value))
        else:
            tolerance = expected.tolerance.for_key(key)
            findings.append(Finding(key, classify(value, actual[key], tolerance), value,
                                    actual[key], tolerance))
    for key, value in actual.items():
        if key not in expected.scores:
            findings.append(Finding(key, "ignored" if expected.ignores(key) else "new",
                                    actual=value))
    return findings


def passed(findings: Sequence[Finding]) -> bool:
    """True when every finding is equal, within tolerance or ignored."""
    return all(f.status in PASSING for f in findings)


def counts(findings: Sequence[Finding]) -> dict[Status, int]:
    """Findings per status (every status, zeros included)."""
    found = Counter(f.status for f in findings)
    return {status: found.get(status, 0) for status in STATUSES}


def _value(value: Scalar) -> str:
    return "-" if value is None else repr(value)


def render_findings(findings: Sequence[Finding], show_all: bool = False) -> str:
    """A plain-text report: one line per finding that is not equal (all with ``show_all``),
    then the count per status."""
    lines = []
    for f in findings:
        if f.status == "equal" and not show_all:
            continue
        delta = f"  delta {f.delta:+.6g}" if f.delta is not None else ""
        tolerance = f" (tolerance {f.tolerance:g})" if f.status in ("within", "regressed") \
            and f.delta is not None else ""
        lines.append(f"{f.status:>9}  {f.key}: expected {_value(f.expected)}, "
                     f"got {_value(f.actual)}{delta}{tolerance}")
    summary = ", ".join(f"{n} {status}" for status, n in counts(findings).items())
    verdict = "PASS" if passed(findings) else "FAIL"
    return "\n".join([*lines, f"{verdict}: {summary}"])
