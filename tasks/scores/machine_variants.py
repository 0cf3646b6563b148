"""Machine variants of an expected-score file: the numbers that another CPU family gives.

A training run is deterministic on one machine but not across CPU families: torch's BLAS (MKL)
picks its matrix-product code path by CPU, the last bits of a product differ, and a training
carries them on (the demo's quick Flair NER tagger: test F1 0.72908 on an Intel Xeon, 0.72946 on
an AMD EPYC, and through it the adversarial suggestions). A variant file beside the base file
``<profile>.yaml`` pins what the same code gives on another family::

    # tasks/scores/expected/demo@amd-epyc.yaml
    profile: demo
    machine: AMD EPYC*        # glob over the CPU model name (/proc/cpuinfo `model name`)
    scores:                   # only the numbers that differ from the base file
      "paraphrase.json#/taggers/ner_test_f1": 0.7294565695034422

On a machine whose CPU model matches ``machine``, the check reads the base file with the
variant's numbers in place of the base's (:func:`with_variant`); the base's tolerances and
ignored keys apply to both. ``qastress check-scores --update`` there rewrites the variant with
the numbers of this run that the base does not already give (:func:`updated_variant`), and leaves
the base, pinned on another machine, as it is. A new family starts from a variant file with
``scores: {}``.
"""

from __future__ import annotations

import fnmatch
import glob
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tasks.io.atomic import write_text
from tasks.scores.compare import PASSING, ExpectedScores, compare
from tasks.scores.environment import drift
from tasks.scores.expected import (
    ExpectedScoresError,
    dump_packages,
    load_expected,
    parse_packages,
)
from tasks.scores.metrics import Scalar


@dataclass(frozen=True)
class MachineVariant:
    """The numbers of one profile that machines matching ``machine`` give differently."""

    path: Path
    profile: str
    machine: str
    scores: Mapping[str, Scalar]
    packages: Mapping[str, str] = field(default_factory=dict)

    def matches(self, cpu: str) -> bool:
        """Whether the CPU model name ``cpu`` matches this variant's glob."""
        return fnmatch.fnmatchcase(cpu, self.machine)


def variant_paths(base: Path) -> list[Path]:
    """The variant files beside ``base`` (``<stem>@<name>.yaml``), sorted by name."""
    base = Path(base)
    return sorted(base.parent.glob(glob.escape(base.stem) + "@*" + base.suffix))


def load_variant(path: Path) -> MachineVariant:
    """Read and validate one variant file; errors name the file and what was expected."""
    try:
        raw: Any = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ExpectedScoresError(f"{path}: not valid YAML ({exc})") from None
    if not isinstance(raw, dict):
        raise ExpectedScoresError(f"{path}: expected a mapping with profile, machine, scores")
    unknown = set(raw) - {"profile", "machine", "scores", "packages"}
    if unknown:
        raise ExpectedScoresError(f"{path}: unknown keys {sorted(unknown)} (a machine variant "
                                  "holds profile, machine, scores and packages; tolerances and "
                                  "ignored keys come from the base file)")
    profile, machine, scores = raw.get("profile"), raw.get("machine"), raw.get("scores")
    if not isinstance(profile, str) or not profile:
        raise ExpectedScoresError(f"{path}: `profile` must be a profile name")
    if not isinstance(machine, str) or not machine:
        raise ExpectedScoresError(f"{path}: `machine` must be a glob over the CPU model name, "
                                  "e.g. 'AMD EPYC*'")
    if not isinstance(scores, dict):
        raise ExpectedScoresError(f"{path}: `scores` must map metric keys to values")
    for key, value in scores.items():
        if isinstance(value, dict | list):
            raise ExpectedScoresError(f"{path}: scores[{key!r}]: expected a scalar")
    return MachineVariant(Path(path), profile, machine, {str(k): v for k, v in scores.items()},
                          parse_packages(raw.get("packages"), str(path)))


def variant_for(base: Path, cpu: str) -> MachineVariant | None:
    """The first variant beside ``base`` (by file name) whose glob matches ``cpu``, if any."""
    for path in variant_paths(base):
        variant = load_variant(path)
        if variant.matches(cpu):
            return variant
    return None


def with_variant(base: ExpectedScores, variant: MachineVariant) -> ExpectedScores:
    """``base`` with ``variant``'s numbers in place of its own."""
    if variant.profile != base.profile:
        raise ExpectedScoresError(f"{variant.path}: profile {variant.profile!r}, but the base "
                                  f"file's is {base.profile!r}")
    return ExpectedScores(profile=base.profile, scores={**base.scores, **variant.scores},
                          tolerance=base.tolerance, ignore=base.ignore)


def expected_on(base: Path, cpu: str) -> ExpectedScores:
    """The expected scores that apply on a machine whose CPU model is ``cpu``: the base file,
    with the numbers of the variant beside it that matches ``cpu``, if one does."""
    expected = load_expected(base)
    variant = variant_for(base, cpu)
    return expected if variant is None else with_variant(expected, variant)


def updated_variant(base: ExpectedScores, variant: MachineVariant,
                    actual: Mapping[str, Scalar],
                    packages: Mapping[str, str] | None = None) -> MachineVariant:
    """``variant`` holding the numbers of ``actual`` that ``base`` does not give (outside its
    tolerance, or absent from it), recording ``packages`` as the versions they were pinned with.

    Raises :class:`ExpectedScoresError` when the base holds numbers that ``actual`` lacks: a
    variant cannot remove a number, only the base's own update can.
    """
    findings = compare(base, actual)
    missing = [f.key for f in findings if f.status == "missing"]
    if missing:
        raise ExpectedScoresError(
            f"{len(missing)} numbers of the base file are not in these metrics (first: "
            f"{missing[0]}); a machine variant cannot remove numbers: update the base file")
    scores = {f.key: f.actual for f in findings if f.status not in PASSING}
    return MachineVariant(variant.path, variant.profile, variant.machine, scores,
                          dict(packages or {}))


def environment_note(base_packages: Mapping[str, str],
                     variant_packages: Mapping[str, str]) -> str | None:
    """Why a variant's numbers may not be the CPU's alone: ``None`` when the base file was
    pinned with the variant's package versions, else a sentence saying what differs."""
    if not variant_packages or dict(base_packages) == dict(variant_packages):
        return None
    if not base_packages:
        return ("the base file records no package versions, so some of these numbers may come "
                "from the environment rather than the CPU")
    names = sorted({change.name for change in drift(base_packages, variant_packages)}
                   | {change.name for change in drift(variant_packages, base_packages)})
    return (f"the base file was pinned with other versions of {', '.join(names)}, so some of "
            "these numbers may come from the environment rather than the CPU")


def dump_variant(variant: MachineVariant, cpu_measured: str,
                 base_packages: Mapping[str, str] | None = None) -> str:
    """The YAML text of a variant file, with a header saying what it is (and, given the base
    file's ``base_packages``, whether the two were pinned in different environments)."""
    note = (None if base_packages is None
            else environment_note(base_packages, variant.packages))
    header = (
        f"# Machine variant of the `{variant.profile}` expected scores: the numbers that CPUs\n"
        f"# matching `machine` give differently from {variant.profile}.yaml (float rounding in\n"
        "# the BLAS code path, carried on by training: tasks/scores/machine_variants.py).\n"
        + (f"# Note: {note}.\n" if note else "")
        + f"# Measured on: {cpu_measured}. Regenerate on such a machine with\n"
        f"#   qastress run --profile {variant.profile} && "
        f"qastress check-scores --profile {variant.profile} --update\n")
    body = yaml.safe_dump({"profile": variant.profile, "machine": variant.machine},
                          sort_keys=False, allow_unicode=True, width=100)
    scores = yaml.safe_dump({"scores": dict(variant.scores)}, sort_keys=False,
                            allow_unicode=True, width=100)
    return header + body + scores + dump_packages(variant.packages)


def write_variant(variant: MachineVariant, cpu_measured: str,
                  base_packages: Mapping[str, str] | None = None) -> Path:
    """Write a variant file atomically (``base_packages``: as :func:`dump_variant`)."""
    return write_text(variant.path, dump_variant(variant, cpu_measured, base_packages))
