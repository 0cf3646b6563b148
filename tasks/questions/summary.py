"""The construction summary: Markdown on disk plus a Prefect table artifact.

Per relation: triples available in T-REx (aligned triples and distinct facts), questions per
split, rand-ent and train-ent questions, linked subjects, and per bucket the number of facts,
their cumulative frequency and frequency range. Dropped relations and skipped records are
listed, and the linker's precision/recall.
"""

from __future__ import annotations

import json
from pathlib import Path

from tasks.io.atomic import write_text
from tasks.orchestration import artifact_task
from tasks.reporting.tables import markdown_table

HEADER = ["relation", "triples", "facts", "train", "dev", "test", "no-overlap train",
          "rand-ent", "train-ent (linked subjects)"]


def summary_rows(selection: dict, dataset_counts: dict) -> list[list[object]]:
    """One row per selected relation (see :data:`HEADER`), then the totals."""
    rows: list[list[object]] = []
    for relation, counts in dataset_counts.items():
        stats = selection["stats"].get(relation, {})
        rows.append([relation, stats.get("triples", 0), stats.get("facts", 0), counts["train"],
                     counts["dev"], counts["test"], counts["no_overlap"]["train"],
                     sum(counts["rand_ent"]), sum(counts["train_ent"])])
    if rows:
        rows.append(["**total**", *[sum(int(r[i]) for r in rows)  # type: ignore[call-overload]
                                    for i in range(1, len(HEADER))]])
    return rows


def _range(item: dict) -> str:
    if item["min_frequency"] is None:
        return "-"
    return f"{item['min_frequency']}-{item['max_frequency']}"


def bucket_table(relation: str, bucket_info: dict, dataset_counts: dict) -> str:
    """Markdown table of one relation's buckets."""
    ranges = bucket_info["ranges"][relation]
    counts = dataset_counts[relation]
    rows = [[f"bucket{item['bucket']}", item["facts"], item["cumulative"], _range(item),
             counts["rand_ent"][item["bucket"]], counts["train_ent"][item["bucket"]]]
            for item in ranges]
    return markdown_table(["bucket", "facts", "cumulative frequency", "frequency range",
                           "rand-ent", "train-ent"], rows)


def render_summary(selection: dict, fact_stats: dict, bucket_info: dict, linking: dict,
                   dataset_counts: dict, bucket_order: str) -> str:
    """The whole Markdown report."""
    criteria = selection["criteria"]
    parts = [
        "# EntityQuestions construction\n",
        f"Relations selected: {len(selection['selected'])} of "
        f"{len(selection['selected']) + len(selection['dropped'])} candidates "
        f"(criteria: >= {criteria['min_triples']} facts, >= "
        f"{criteria['min_distinct_answers']} distinct answers).",
    ]
    if selection["dropped"]:
        parts.append("Dropped: " + "; ".join(f"{r} ({why})"
                                             for r, why in selection["dropped"].items()) + ".")
    parts.append(f"\nT-REx: {fact_stats['triples_seen']} aligned triples of the candidate "
                 f"relations, {fact_stats['duplicates']} repeats merged, "
                 f"{fact_stats['label_fallbacks']} label fallbacks to the surface form, "
                 f"{fact_stats['dropped_unlabelled']} facts without label or answer dropped; "
                 f"{fact_stats['skip_summary']}.")
    parts.append(f"Hyperlink counts: {bucket_info['subjects_without_count']} subjects without "
                 f"a count (frequency 0); {bucket_info['skip_summary']}.")
    scores = linking.get("scores")
    link_line = (f"Entity linking of the NQ training questions ({linking['linker']} linker): "
                 f"{linking['questions_with_entity']} of {linking['questions']} questions "
                 f"linked, {linking['distinct_entities']} distinct entities")
    if scores:
        link_line += (f"; precision {scores['precision']}%, recall {scores['recall']}%, "
                      f"F1 {scores['f1']}% against {linking['truth']} "
                      f"({scores['questions']} questions)")
    parts.append(link_line + ".\n")
    parts.append("## Questions per relation\n")
    parts.append(markdown_table(HEADER, summary_rows(selection, dataset_counts)))
    first = "rarest" if bucket_order == "ascending" else "most frequent"
    parts.append(f"\n## Frequency buckets (bucket0 = {first} subjects)\n")
    for relation in dataset_counts:
        parts.append(f"### {relation}\n")
        parts.append(bucket_table(relation, bucket_info, dataset_counts))
    return "\n".join(parts)


def summary_step(selection_path: Path, fact_stats: dict, bucket_info: dict, linking: dict,
                 dataset_counts: dict, summary_path: Path,
                 bucket_order: str = "ascending") -> dict:
    """Write the Markdown summary; return the artifact's header and rows."""
    selection = json.loads(Path(selection_path).read_text(encoding="utf-8"))
    write_text(summary_path, render_summary(selection, fact_stats, bucket_info, linking,
                                            dataset_counts, bucket_order))
    return {"header": HEADER, "rows": summary_rows(selection, dataset_counts)}


summary_task = artifact_task(summary_step, outputs=("summary_path",),
                             name="summarise EntityQuestions")
