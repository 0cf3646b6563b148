"""The study's report: one self-contained, deterministic HTML page of what the flows wrote.

:func:`report_artifacts` names every artifact the report reads (metrics JSON, Markdown reports,
figures) by the :class:`~tasks.layout.Layout`; :func:`raw_input_files` the raw inputs that
exist (``sources.*`` under ``paths.raw``). :func:`build_report` turns them into HTML: one section
per flow output, and a section whose artifacts are missing says which flow did not run instead
of failing. Figures are embedded as base64 ``data:`` URIs, so the page is one file that can be
mailed or archived. Every number is read from the artifacts, never recomputed.

The page is reproducible byte for byte from the same inputs: no timestamps, keys in the order
the artifacts hold them, paths shown relative to the directory that holds ``paths.reports``
(absolute only when outside it), parameters dumped as YAML in model order. Alongside the
numbers it records the resolved parameters and the sha256 of every raw input and artifact it
read (:func:`tasks.orchestration.path_fingerprint`: a directory with a ``manifest.json`` is
represented by the fingerprint recorded there).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks.config import Params
from tasks.io.atomic import write_text
from tasks.layout import Layout
from tasks.orchestration import artifact_task
from tasks.pipeline.stages import reported_flows
from tasks.reporting.findings import VERDICT_RULE, findings_markdown, study_findings
from tasks.reporting.html_page import (
    Bullets,
    Heading,
    Section,
    Table,
    Text,
    render_page,
)
from tasks.reporting.html_readers import (
    augmentation_section,
    reader_headline_lines,
    readers_section,
    retrieve_then_read_section,
)
from tasks.reporting.html_sections import (
    buckets_section,
    comparison_section,
    display_path,
    entity_questions_section,
    fingerprints_section,
    headline_lines,
    other_figures_section,
    params_section,
    paraphrase_section,
    paraphrased_retrieval_section,
    read_json,
    topk_section,
)
from tasks.reporting.html_training import (
    retriever_experiments_section,
    retriever_training_section,
)
from tasks.reporting.specialised_report import specialised_section
from tasks.reporting.tables import publish_link_artifact, publish_markdown_artifact

TITLE = "qastress: stress-testing QA retrievers"
#: The sources of the page's code and template: task inputs of the report, so a change of
#: either invalidates the cached report (the task source alone does not cover them).
RENDERER = (Path(__file__), Path(__file__).with_name("html_page.py"),
            Path(__file__).with_name("html_sections.py"),
            Path(__file__).with_name("specialised_report.py"),
            Path(__file__).with_name("html_readers.py"),
            Path(__file__).with_name("reader_tables.py"),
            Path(__file__).with_name("findings.py"))

#: Flows that write what the report reads, in pipeline order: (flow, CLI stage); from the
#: stage registry (``in_report``).
FLOWS = reported_flows()


# --- what the report reads ----------------------------------------------------------------


def report_artifacts(layout: Layout) -> dict[str, Path]:
    """Every artifact the report may read, by a stable name (present or not)."""
    retrievers = list(dict.fromkeys(layout.params.retrieval.retrievers))
    return {
        "eq_summary": layout.eq_summary,
        **{f"topk_{name}": layout.retrieval_metrics(name) for name in retrievers},
        "comparison": layout.retrieval_comparison,
        "accuracy_plot": layout.retrieval_accuracy_plot,
        "buckets": layout.retrieval_buckets_metrics,
        "buckets_plot": layout.retrieval_buckets_plot,
        "retriever_training": layout.retriever_training_metrics,
        "retriever_experiments": layout.experiment_metrics,
        "tsne_plot": layout.experiment_tsne_plot,
        "paraphrase_metrics": layout.paraphrase_metrics,
        "paraphrase_report": layout.paraphrase_report,
        "paraphrased_retrieval": layout.retrieval_paraphrased_metrics,
        "specialised": layout.specialised_metrics,
        "readers": layout.readers_metrics,
        "reader_augmentation": layout.augmentation_metrics,
        "retrieve_then_read": layout.retrieve_then_read_metrics,
    }


def raw_input_files(layout: Layout) -> dict[str, list[Path]]:
    """The raw inputs that exist, per ``sources`` key (``trex`` is a glob: every match)."""
    params = layout.params
    found: dict[str, list[Path]] = {}
    for key in type(params.sources).model_fields:
        if key == "world":
            continue
        paths = layout.trex_files() if key == "trex" else [params.raw_path(key)]
        paths = [p for p in paths if p.exists()]
        if paths:
            found[key] = paths
    return found


def figure_files(layout: Layout) -> list[Path]:
    """The PNG figures in ``paths.plots`` (sorted by name)."""
    plots = layout.params.paths.plots
    return sorted(plots.glob("*.png")) if plots.is_dir() else []


# --- the page ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Report:
    """The rendered page and its headline numbers (Markdown, for a Prefect artifact)."""

    html: str
    headline: str
    not_run: list[str]
    findings: str
    """The papers' findings with this run's numbers and verdicts (a Markdown table)."""


def build_report(params: Params, artifacts: Mapping[str, Path],
                 raw: Mapping[str, Sequence[Path]] | None = None,
                 figures: Sequence[Path] = (), title: str = TITLE) -> Report:
    """The HTML page of whatever of ``artifacts`` exists (see :func:`report_artifacts`)."""
    root = Path(os.path.abspath(params.paths.reports)).parent
    metrics = {key.removeprefix("topk_"): read_json(path) for key, path in artifacts.items()
               if key.startswith("topk_") and path.is_file()}
    sections = [
        entity_questions_section(artifacts, root),
        topk_section(artifacts, root, metrics),
        comparison_section(params, artifacts, root, metrics),
        buckets_section(params, artifacts, root),
        retriever_training_section(artifacts, root),
        retriever_experiments_section(artifacts, root),
        paraphrase_section(artifacts, root),
        paraphrased_retrieval_section(params, artifacts, root),
        readers_section(artifacts, root),
        retrieve_then_read_section(artifacts, root),
        augmentation_section(artifacts, root),
        specialised_section(artifacts["specialised"],
                            display_path(artifacts["specialised"], root)),
    ]
    for section in sections:
        if section.missing and section.blocks:  # partly written: keep it, say what is absent
            section.blocks.append(Text("Not written: " + ", ".join(section.missing) + "."))
            section.missing.clear()
    extra = other_figures_section(figures, artifacts)
    if extra is not None:
        sections.append(extra)
    ran = {s.flow for s in sections if s.flow and s.ran}
    not_run = [flow for flow, _ in FLOWS if flow not in ran]
    headline = headline_lines(params, metrics, artifacts, not_run,
                              reader_headline_lines(artifacts))
    read = [p for p in artifacts.values() if p.is_file()]
    sections += [params_section(params, root), fingerprints_section(raw or {}, read, figures, root)]
    overview = Section("overview", "Overview", None, blocks=[
        Text(f"Profile {params.profile}, world {params.sources.world}. Every number below is "
             "read from the artifacts the flows wrote; sections whose artifacts are missing "
             "say so.")])
    overview.blocks.append(Table(
        caption="Flows", header=["flow", "status", "to run it"],
        rows=[[flow, "not run" if flow in not_run else "ran", command]
              for flow, command in FLOWS], numeric=[False, False, False]))
    findings = study_findings(artifacts)
    overview.blocks += [
        Heading("The papers' findings"),
        Table(caption="Each finding with this run's numbers (differences in points, paired "
                      "bootstrap 95% CIs) and a verdict by the rule below",
              header=["paper", "finding", "this run", "verdict"],
              rows=[[f.paper, f.claim, f.measured, f.verdict] for f in findings],
              numeric=[False, False, False, False]),
        Text(VERDICT_RULE)]
    if headline:
        overview.blocks += [Heading("Headline numbers"),
                            Bullets([line.removeprefix("- ") for line in headline])]
    sections.insert(0, overview)
    html = render_page(title, sections)
    table = findings_markdown(findings)
    markdown = (f"# {title}\n\n" + "\n".join(headline or ["- no results yet"])
                + f"\n\n## The papers' findings\n\n{table}")
    return Report(html=html, headline=markdown, not_run=not_run, findings=table)


# --- the task and its artifacts ---------------------------------------------------------------


def write_report(params: Params, artifacts: Mapping[str, Path],
                 raw: Mapping[str, Sequence[Path]], figures: Sequence[Path],
                 renderer: Sequence[Path],
                 out: Path) -> dict[str, Any]:
    """Write the HTML report atomically; return its path, headline Markdown and the flows
    that did not run. ``renderer`` (the page's source files) is an input only for the cache key."""
    del renderer
    report = build_report(params, artifacts, raw, figures)
    write_text(out, report.html)
    return {"path": str(out), "headline": report.headline, "not_run": report.not_run,
            "findings": report.findings}


def publish_report_artifacts(report_path: Path, headline: str,
                             key: str = "qastress-report") -> None:
    """A link artifact to the report (``file://`` URI) and a Markdown artifact with the
    headline numbers (a logged no-op outside a Prefect run)."""
    publish_link_artifact(key, report_path, "The study's HTML report (one self-contained file)")
    uri = Path(report_path).resolve().as_uri()
    publish_markdown_artifact(f"{key}-summary", f"{headline}\n[{uri}]({uri})\n",
                              "Headline numbers of the study")


write_report_task = artifact_task(write_report, outputs=("out",), name="write HTML report")
