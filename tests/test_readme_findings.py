"""README's table of the papers' findings on the demo is generated from the pinned scores
(``tasks/scores/expected/demo.yaml`` and its AMD EPYC variant) by the report's own findings
code, so it cannot drift from what the code produces: re-pinning the scores fails this test
until the README block is replaced by the one the failure prints."""

from __future__ import annotations

from pathlib import Path

from tasks.reporting.findings import METRICS, VERDICT_RULE, findings_from_metrics
from tasks.scores.machine_variants import expected_on
from tasks.scores.metrics import unflatten

ROOT = Path(__file__).resolve().parents[1]
START, END = "<!-- findings:demo (generated: tests/test_readme_findings.py) -->", \
    "<!-- /findings:demo -->"
#: Machine column -> a CPU model name its expected scores apply to.
MACHINES = {"Intel Xeon (`demo.yaml`)": "Intel(R) Xeon(R) CPU",
            "AMD EPYC (`demo@amd-epyc.yaml`)": "AMD EPYC 7B13"}


def _findings(cpu: str):
    scores = dict(expected_on(ROOT / "tasks/scores/expected/demo.yaml", cpu).scores)
    return findings_from_metrics({name: unflatten(scores, file)
                                  for name, file in METRICS.items()})


def demo_findings_block() -> str:
    """The README block: one row per finding, this machine's numbers and verdict per column."""
    per_machine = [_findings(cpu) for cpu in MACHINES.values()]
    lines = [START, "| paper | finding | " + " | ".join(MACHINES) + " |",
             "|---|---|" + "---|" * len(MACHINES)]
    for row in zip(*per_machine, strict=True):
        cells = [f"{f.measured}: **{f.verdict}**" for f in row]
        lines.append(f"| {row[0].paper} | {row[0].claim} | " + " | ".join(cells) + " |")
    return "\n".join([*lines, "", VERDICT_RULE, END])


def test_the_readme_findings_table_is_the_pinned_scores():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert START in readme and END in readme, f"README.md has no {START} block"
    block = readme[readme.index(START):readme.index(END) + len(END)]
    expected = demo_findings_block()
    assert block == expected, "README.md's findings block is stale; replace it with:\n" + expected


def test_both_machines_have_every_finding():
    for cpu in MACHINES.values():
        assert all(f.verdict != "not run" for f in _findings(cpu))
