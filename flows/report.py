"""Flow: the study's report, one static HTML page of everything the other flows produced.

Inputs are the artifacts the flows wrote, located by the layout: the EntityQuestions summary
(``reports/entityquestions_summary.md``), the top-k metrics of every configured retriever
(``metrics/retrieval_<name>.json``), the paired bootstrap comparison of the retrievers
(``metrics/retrieval_comparison.json``), the accuracy per subject-frequency bucket (Figure 1,
``metrics/retrieval_buckets.json``), the paraphrase pipeline's report and counts
(``reports/paraphrase.md``, ``metrics/paraphrase.json``), retrieval on original vs
paraphrased questions (``metrics/retrieval_paraphrased.json``) and the PNG figures of
``paths.plots``. An artifact that is missing is not an error: its section states which flow has
not run. The numbers are copied from the artifacts, never recomputed.

The page records what it was computed from: the resolved parameters (YAML) and the sha256 of
every raw input (``sources.*`` under ``paths.raw``) and of every artifact it read. It is written
atomically to ``reports/report.html``, self-contained (figures as ``data:`` URIs) and
deterministic (no timestamps, stable order, paths relative to the run's root), so the same
inputs give the same bytes. The writing task's cache key covers the content of every file it
reads and the rendering code; the Prefect artifacts (a link to the page and the headline
numbers) are published on every run.
"""

from __future__ import annotations

from prefect import flow

from flows._params import resolve
from tasks.config import Params
from tasks.layout import Layout
from tasks.reporting.html_report import (
    RENDERER,
    figure_files,
    publish_report_artifacts,
    raw_input_files,
    report_artifacts,
    write_report_task,
)


@flow(name="report", log_prints=True)
def report(params: Params | None = None, profile: str | None = None,
           params_file: str | None = None) -> str:
    """Write the HTML report of whatever the study has produced; return its path."""
    params = resolve(params, profile, params_file)
    layout = Layout(params)
    result = write_report_task(params, report_artifacts(layout), raw_input_files(layout),
                               figure_files(layout), RENDERER, layout.report_html)
    publish_report_artifacts(layout.report_html, result["headline"])
    if result.get("findings"):
        print("the papers' findings on this run:\n" + result["findings"])
    if result["not_run"]:
        print(f"not in the report (flows not run): {', '.join(result['not_run'])}")
    print(f"report: {layout.report_html.resolve()}")
    return str(layout.report_html)


if __name__ == "__main__":
    from flows.cli import main_for

    main_for("report")
