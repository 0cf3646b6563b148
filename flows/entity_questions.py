"""Flow: build EntityQuestions from knowledge-base triples (Sciavolino et al., 2021, §2).

T-REx triples of the 24 relations -> one fact per (relation, subject), answers = the object's
label and aliases -> up to ``facts_per_relation`` facts sampled per relation -> questions
rendered with the relation's template -> the official dataset layout + a Parquet table.
"""

from __future__ import annotations

from prefect import flow

from flows._params import resolve
from tasks.config import Params
from tasks.layout import Layout
from tasks.questions.slice import build_test_questions_task


@flow(name="entity-questions", log_prints=True)
def entity_questions(params: Params | None = None, profile: str | None = None,
                     params_file: str | None = None) -> dict[str, int]:
    """Sample facts and render the test questions of every relation."""
    params = resolve(params, profile, params_file)
    layout = Layout(params)
    counts = build_test_questions_task(
        layout.trex_files(), params.raw_path("entity_labels"), layout.eq_dataset,
        layout.questions_table, params.entity_questions)
    print(f"{sum(counts.values())} test questions over {len(counts)} relations "
          f"-> {layout.eq_dataset}")
    return counts


if __name__ == "__main__":
    from flows.cli import main_for

    main_for("entity-questions")
