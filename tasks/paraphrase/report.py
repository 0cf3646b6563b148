"""The paraphrase report: counts at every filter step and example paraphrases, as Markdown on
disk and as a Prefect markdown artifact (when inside a Prefect run)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tasks.io.atomic import write_json, write_text
from tasks.reporting.tables import markdown_table, publish_markdown_artifact

#: Report sections in pipeline order: (key in the stats, heading).
STEPS = (
    ("ppdb", "PPDB lookup table"),
    ("triples", "Paraphraser training triples"),
    ("vocab", "SentencePiece vocabulary"),
    ("paraphraser", "Paraphraser training"),
    ("suggestions", "PPDB suggestions for the SQuAD questions"),
    ("generation", "Generated paraphrases"),
    ("similarity", "Similarity filter"),
    ("test_set", "Non-adversarial test set"),
    ("acceptance", "Acceptance rate of the human evaluation (paper: 78.1 %)"),
    ("human_eval", "Human evaluation (non-adversarial set)"),
    ("taggers", "Flair taggers (NER, chunks)"),
    ("adversarial", "Adversarial suggestions"),
    ("adversarial_generation", "Paraphrases with adversarial suggestions"),
    ("adversarial_similarity", "Similarity filter (adversarial)"),
    ("adversarial_set", "Adversarial set (kept above the adversarial threshold)"),
    ("adversarial_human_eval", "Human evaluation (adversarial set)"),
    ("edits", "What the paraphrases in the sets change (content words; the answer's sentence; "
              "words of the context's other sentences; the suggestion)"),
)


def _flatten(counts: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = []
    for key, value in counts.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            rows += _flatten(value, f"{name}.")
        elif isinstance(value, int | float | str | bool) or value is None:
            rows.append((name, value))
    return rows


def _cell(value: Any) -> Any:
    """Integers as they are (right-aligned), floats with 4 significant digits, the rest as
    text."""
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value).lower()
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def render_report(stats: Mapping[str, Mapping[str, Any]],
                  examples: Sequence[Mapping[str, Any]]
                  | Mapping[str, Sequence[Mapping[str, Any]]] = (),
                  title: str = "Paraphrased questions (Gan & Ng, 2019)",
                  notes: Sequence[str] = (),
                  rated: Mapping[str, Sequence[Mapping[str, Any]]] | None = None) -> str:
    """The Markdown text: one count table per step (pipeline order), then the examples (a list,
    or ``{heading: list}`` for several tables), then the rated pairs (``{heading: rows}`` of
    ``original``, ``paraphrase``, ``ratings``, ``accepted``)."""
    parts = [f"# {title}\n"]
    parts += [f"{note}\n" for note in notes]
    known = [key for key, _ in STEPS]
    headings = dict(STEPS)
    for key in known + [k for k in stats if k not in known]:
        counts = stats.get(key)
        if not counts:
            continue
        rows = [[name, _cell(value)] for name, value in _flatten(counts)]
        parts.append(f"## {headings.get(key, key)}\n\n" + markdown_table(["count", "value"],
                                                                            rows))
    groups = examples if isinstance(examples, Mapping) else {"Example paraphrases": examples}
    header = ["original", "suggestion", "paraphrase", "similarity", "kept"]
    for heading, items in groups.items():
        if not items:
            continue
        rows = [[e.get("question", ""), e.get("suggestion") or "<none>", e.get("paraphrase", ""),
                 _cell(e.get("similarity")), "yes" if e.get("kept") else "no"]
                for e in items]
        parts.append(f"## {heading}\n\n" + markdown_table(header, rows))
    for heading, items in (rated or {}).items():
        if items:
            rows = [[e["original"], e["paraphrase"], e["ratings"],
                     "yes" if e["accepted"] else "no"] for e in items]
            parts.append(f"## {heading}\n\n" + markdown_table(
                ["original", "paraphrase", "ratings (semantic/fluency)", "accepted"], rows))
    return "\n".join(parts)


def write_report(stats: Mapping[str, Mapping[str, Any]],
                 examples: Sequence[Mapping[str, Any]]
                 | Mapping[str, Sequence[Mapping[str, Any]]],
                 report_path: Path, metrics_path: Path | None = None,
                 artifact_key: str = "paraphrase-report", notes: Sequence[str] = (),
                 rated: Mapping[str, Sequence[Mapping[str, Any]]] | None = None) -> str:
    """Write the Markdown report (and the counts as JSON metrics); publish the artifact."""
    text = render_report(stats, examples, notes=notes, rated=rated)
    write_text(report_path, text)
    if metrics_path is not None:
        write_json(metrics_path, {k: v for k, v in stats.items() if v}, indent=2)
    publish_markdown_artifact(artifact_key, text, "Paraphrase pipeline: counts and examples")
    return text
