"""The stage registry is consistent with the flows, the CLI and the report."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tasks.pipeline.stages import STAGES, flows_by_command, reported_flows, stage

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("entry", STAGES, ids=lambda s: s.name)
def test_every_stage_names_a_flow_of_that_name(entry):
    source = (ROOT / entry.entrypoint.partition(":")[0]).read_text(encoding="utf-8")
    flows = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef):
            for deco in node.decorator_list:
                if isinstance(deco, ast.Call) and getattr(deco.func, "id", "") == "flow":
                    names = {k.arg: k.value.value for k in deco.keywords}
                    flows[node.name] = names.get("name")
    assert flows.get(entry.attribute) == entry.command  # the Prefect flow name = the command


def test_names_are_unique_and_outputs_have_one_producer():
    assert len({s.name for s in STAGES}) == len(STAGES)
    produced = [p for s in STAGES for p in (*s.outs, *s.metrics, *s.plots)]
    assert len(produced) == len(set(produced))


def test_every_input_is_produced_by_an_earlier_stage():
    """Each dependency is an earlier stage's output, lies inside one, or holds some (the
    report reads every raw input: both halves of the demo world)."""
    made: list[str] = []
    for entry in STAGES:
        for dep in entry.deps:
            assert any(dep == out or dep.startswith(out + "/") or out.startswith(dep + "/")
                       for out in made), (entry.name, dep)
        made += [*entry.outs, *entry.metrics, *entry.plots]


def test_the_demo_world_halves_write_apart():
    """The two halves' outputs do not overlap (the branches' edges: test_stage_graph)."""
    retrieval, reading = stage("demo_world"), stage("demo_reading_world")
    assert not {o.rstrip("/") for o in retrieval.outs} & {o.rstrip("/") for o in reading.outs}
    for out in (*retrieval.outs, *reading.outs):
        assert out.startswith("${paths.data}/raw/"), out
    from tasks.pipeline.demo_world_parts import COMMANDS, part_writing

    assert {"retrieval": retrieval.command, "reading": reading.command} == COMMANDS
    assert part_writing("trex/re-nlg_*.json") == "retrieval"
    assert part_writing("squad/dev-v1.1.json") == "reading" and part_writing("x/y") is None


def test_the_report_lists_the_stages_whose_outputs_it_reads():
    report = stage("report")
    producers = {s.command for s in STAGES for dep in report.deps
                 if dep in (*s.outs, *s.metrics, *s.plots) and s is not report}
    assert {flow for flow, _ in reported_flows()} == producers - {"demo-world"}
    assert reported_flows()[0] == ("entity-questions", "qastress stage entity-questions")


def test_cli_and_report_take_the_registry():
    from flows.cli import FLOWS
    from tasks.reporting.html_report import FLOWS as REPORT_FLOWS

    assert list(FLOWS) == ["study", *[s.command for s in STAGES]]
    assert flows_by_command() == FLOWS
    assert reported_flows() == REPORT_FLOWS
    assert stage("bm25-index") is stage("bm25_index")
    with pytest.raises(KeyError, match="unknown stage"):
        stage("nope")
