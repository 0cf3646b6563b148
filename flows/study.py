"""The whole study (the main job): every flow of the DAG in order, on one configuration.

demo world (when ``sources.world`` is ``demo``) -> BM25 index of the passages ->
EntityQuestions -> retrieval (BM25, dense, hybrid) -> paraphrased SQuAD test sets ->
retrieval on original vs paraphrased questions -> the HTML report of all of it.
Retriever fine-tuning and the readers' EM/F1 join here as they land.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from flows._params import resolve
from flows.bm25_index import bm25_index
from flows.demo_world import demo_world
from flows.entity_questions import entity_questions
from flows.paraphrase import paraphrase
from flows.paraphrased_retrieval import paraphrased_retrieval
from flows.report import report
from flows.retrieval import retrieval
from tasks.config import Params
from tasks.layout import Layout


@flow(name="study", log_prints=True)
def study(params: Params | None = None, profile: str | None = None,
          params_file: str | None = None) -> dict[str, str]:
    """Run the study end to end and return where its outputs are."""
    params = resolve(params, profile, params_file)
    layout = Layout(params)
    if params.sources.world == "demo":
        demo_world(params=params)
    bm25_index(params=params)
    entity_questions(params=params)
    retrieval(params=params)
    paraphrase(params=params)
    paraphrased_retrieval(params=params)
    report(params=params)
    outputs = {
        "questions": str(layout.eq_dataset),
        "EQ summary": str(layout.eq_summary),
        **{f"{name} results": str(layout.retrieval_results(name))
           for name in params.retrieval.retrievers},
        **{f"{name} top-k": str(layout.retrieval_report(name))
           for name in params.retrieval.retrievers},
        "comparison": str(layout.retrieval_comparison_report),
        "figure": str(layout.retrieval_accuracy_plot),
        "paraphrased sets": str(layout.paraphrase_test_sets),
        "paraphrase report": str(layout.paraphrase_report),
        "metrics": str(params.paths.metrics),
        "report": str(layout.report_html),
    }
    for name, path in outputs.items():
        print(f"{name:>15}: {Path(path).resolve()}")
    return outputs


if __name__ == "__main__":
    from flows.cli import main_for

    main_for("study")
