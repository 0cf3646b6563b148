"""README's table of the papers' findings on the demo is generated from the pinned scores
(``tasks/scores/expected/demo.yaml`` and its AMD EPYC variant) by the report's own findings
code, so it cannot drift from what the code produces: re-pinning the scores fails this test
until the README block is replaced by the one the failure prints."""

from __future__ import annotations

from pathlib import Path

import pytest

from tasks.reporting.findings import VERDICT_RULE, findings_from_metrics, metrics_from_scores
from tasks.scores.machine_variants import expected_on

ROOT = Path(__file__).resolve().parents[1]
#: README block -> (profile, {machine column: a CPU model its expected scores apply to}).
BLOCKS = {
    "demo": ("demo", {"Intel Xeon (`demo.yaml`)": "Intel(R) Xeon(R) CPU",
                      "AMD EPYC (`demo@amd-epyc.yaml`)": "AMD EPYC 7B13"}),
    "demo-large": ("demo-large", {"AMD EPYC (`demo-large.yaml`)": "AMD EPYC 7B13",
                                  "Intel Xeon (`demo-large@intel-xeon.yaml`)":
                                      "Intel(R) Xeon(R) Processor"}),
}


def _markers(block: str) -> tuple[str, str]:
    return (f"<!-- findings:{block} (generated: tests/test_readme_findings.py) -->",
            f"<!-- /findings:{block} -->")


def _findings(profile: str, cpu: str):
    scores = dict(expected_on(ROOT / f"tasks/scores/expected/{profile}.yaml", cpu).scores)
    return findings_from_metrics(metrics_from_scores(scores))


def findings_block(block: str) -> str:
    """A README block: one row per finding, each machine's numbers and verdict in a column."""
    profile, machines = BLOCKS[block]
    start, end = _markers(block)
    per_machine = [_findings(profile, cpu) for cpu in machines.values()]
    lines = [start, "| paper | finding | " + " | ".join(machines) + " |",
             "|---|---|" + "---|" * len(machines)]
    for row in zip(*per_machine, strict=True):
        cells = [f"{f.measured}: **{f.verdict}**" for f in row]
        lines.append(f"| {row[0].paper} | {row[0].claim} | " + " | ".join(cells) + " |")
    return "\n".join([*lines, "", VERDICT_RULE, end])


@pytest.mark.parametrize("block", list(BLOCKS))
def test_the_readme_findings_tables_are_the_pinned_scores(block):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start, end = _markers(block)
    assert start in readme and end in readme, f"README.md has no {start} block"
    found = readme[readme.index(start):readme.index(end) + len(end)]
    expected = findings_block(block)
    assert found == expected, "README.md's findings block is stale; replace it with:\n" + expected


@pytest.mark.parametrize("block", list(BLOCKS))
def test_every_finding_has_pinned_metrics(block):
    profile, machines = BLOCKS[block]
    for cpu in machines.values():
        assert all(f.verdict != "not run" for f in _findings(profile, cpu))
