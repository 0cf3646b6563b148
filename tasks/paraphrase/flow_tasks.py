"""The paraphrase pipeline as named steps: plain functions with a cached task on top each.

PPDB lookup table -> training triples -> SentencePiece vocabulary -> paraphraser -> PPDB
suggestions for the SQuAD dev questions -> generated paraphrases -> similarity filter ->
non-adversarial test set -> human-evaluation form (and ratings, when given) -> report.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from prefect import task

from tasks.io.atomic import write_json
from tasks.io.errors import MissingInputError, SkipCounter
from tasks.io.squad import read_squad
from tasks.io.tables import read_table, write_table
from tasks.orchestration import artifact_task
from tasks.paraphrase.edits import summarise_edits
from tasks.paraphrase.generation import (
    train_paraphraser_model,
)
from tasks.paraphrase.human_eval import export_form, import_ratings
from tasks.paraphrase.ppdb_lookup import build_ppdb_table
from tasks.paraphrase.report import write_report
from tasks.paraphrase.similarity import score_candidates
from tasks.paraphrase.suggestions import SUGGESTIONS_SCHEMA, suggest_for_squad
from tasks.paraphrase.test_sets import (
    ParaphrasePair,
    build_test_set,
    write_test_set,
)
from tasks.paraphrase.text import contains_span, normalise_question, tokenize
from tasks.paraphrase.training_data import build_training_triples
from tasks.paraphrase.vocab import train_vocab


def human_evaluation(pairs_path: Path, orig_path: Path, out_dir: Path, raters: Sequence[str],
                     seed: int, ratings_file: Path | None = None, min_rating: int = 4,
                     on_error: str = "raise", name: str = "dev",
                     id_base: int | None = None, id_scheme: str = "dev",
                     accepted_dir: Path | None = None) -> dict[str, Any]:
    """Export the rating form (``out_dir/form.csv``) of the test pairs. With a filled form,
    import it (``results.json``: counts, kept pairs, agreement) and write the test set
    restricted to the pairs every rater accepts: ``{name}_orig/para.json`` in
    ``accepted_dir`` when given (then written even when empty), else
    ``{name}_human_orig/para.json`` in ``out_dir``. ``acceptance_rate`` is the share of the
    rated pairs every rater accepts (the paper's 78.1 %), ``acceptance_rate_<rater>`` each
    rater's own."""
    rows = read_table(pairs_path).to_pylist()
    form = out_dir / "form.csv"
    export_form([{"pair_id": r["squad_id"], "original": r["original"],
                  "paraphrase": r["paraphrase"]} for r in rows], form, raters, seed)
    counts: dict[str, Any] = {"pairs_exported": len(rows), "raters": len(raters)}
    if ratings_file is None:
        return counts
    if not ratings_file.is_file():
        raise MissingInputError(f"paraphrase.ratings_file: {ratings_file} does not exist (fill "
                                f"in a copy of {form} and point the parameter at it)")
    result = import_ratings(ratings_file, [r["squad_id"] for r in rows], raters, min_rating,
                            on_error)
    write_json(out_dir / "results.json", result.summary(), indent=2)
    kept = set(result.kept)
    by_id = {q.id: q for q in read_squad(orig_path).questions()}
    pairs = [ParaphrasePair(_original(by_id[r["orig_id"]], r), r["paraphrase"], r["suggestion"],
                            r["similarity"]) for r in rows if r["squad_id"] in kept]
    if accepted_dir is not None:
        write_test_set(pairs, accepted_dir, name, id_base, id_scheme=id_scheme)
    elif pairs:
        write_test_set(pairs, out_dir, f"{name}_human", id_base, id_scheme=id_scheme)
    return {**counts, **result.counts, **acceptance(result.ratings, raters, min_rating),
            **{f"{scale}_{k}": v for scale, values in result.agreement.items()
               for k, v in values.items() if k != "pairs"}}


def acceptance(ratings: Mapping[str, Mapping[str, Mapping[str, int]]], raters: Sequence[str],
               min_rating: int) -> dict[str, float | None]:
    """Share of the rated pairs every rater accepts (``>= min_rating`` on every scale), and
    each rater's own share; ``None`` when nothing was rated."""
    def accepts(by_rater: Mapping[str, Mapping[str, int]], rater: str) -> bool:
        return all(score >= min_rating for score in by_rater[rater].values())

    n = len(ratings)
    out: dict[str, float | None] = {
        "acceptance_rate": sum(all(accepts(r, name) for name in raters)
                               for r in ratings.values()) / n if n else None}
    for name in raters:
        out[f"acceptance_rate_{name}"] = (sum(accepts(r, name) for r in ratings.values()) / n
                                          if n else None)
    return out


def _original(question: Any, row: Mapping[str, Any]) -> Any:
    """The original question with its SQuAD id and text (the orig file holds release ids)."""
    from dataclasses import replace

    return replace(question, id=row["squad_id"], question=row["original"])


def adversarial_rows(questions: Sequence[Any], results: Sequence[Any],
                     per_question: int | None = None) -> list[dict[str, Any]]:
    """Adversarial results as rows of the suggestions table (``SUGGESTIONS_SCHEMA``): one row
    per suggestion in context order, a null row for a question without any (``phrase`` holds
    the chunk label, ``score`` is null). A phrase the question already contains is no
    suggestion (as for PPDB suggestions)."""
    rows = []
    for question, result in zip(questions, results, strict=True):
        base = {"qid": question.id, "question": question.question,
                "source": normalise_question(question.question), "score": None}
        tokens = tokenize(question.question)
        suggestions = [s for s in result.suggestions
                       if not contains_span(tokens, tokenize(s.text))][:per_question or None]
        if not suggestions:
            rows.append({**base, "rank": 0, "phrase": None, "suggestion": None})
        for rank, suggestion in enumerate(suggestions, start=1):
            rows.append({**base, "rank": rank, "phrase": suggestion.label,
                         "suggestion": normalise_question(suggestion.text)})
    return rows


def suggest_adversarial(squad_path: Path, ner: Path | str, chunker: Path | str, out_path: Path,
                        per_question: int | None = None, max_questions: int | None = None,
                        on_error: str = "raise", taggers: tuple[Any, Any] | None = None
                        ) -> dict[str, Any]:
    """Adversarial suggestions (:mod:`tasks.paraphrase.adversarial`) of the SQuAD questions,
    written as a suggestions table; the counts, with why questions got none. A question
    without a gold answer (SQuAD v2 style) gets no suggestion and is counted
    (``questions_without_answer``); of the ``phrases_found``, those the question already
    holds and those past ``per_question`` are no suggestion.

    ``ner`` and ``chunker`` are Flair model names or paths (:func:`models.flair_taggers.
    load_tagger`); ``taggers`` may pass loaded (or stub) taggers instead.
    """
    from tasks.paraphrase.adversarial import suggest_for_questions

    skips = SkipCounter(str(squad_path))
    read = list(read_squad(squad_path, on_error=on_error, skips=skips).questions())
    questions = [q for q in read if q.answers]  # a suggestion must avoid the answer
    if max_questions is not None:
        questions = questions[:max_questions]
    if taggers is None:
        from models.flair_taggers import load_tagger

        taggers = (load_tagger(ner), load_tagger(chunker))
    results = suggest_for_questions(questions, *taggers)
    rows = adversarial_rows(questions, results, per_question)
    write_table(out_path, rows, schema=SUGGESTIONS_SCHEMA)
    reasons = Counter(_reason_kind(r.reason) for r in results if not r.suggestions)
    with_rows = {r["qid"] for r in rows if r["suggestion"] is not None}
    return {"questions": len(questions),
            "questions_with_suggestions": len(with_rows),
            "suggestions": sum(1 for r in rows if r["suggestion"] is not None),
            "phrases_found": sum(len(r.suggestions) for r in results),
            "questions_without_answer": sum(1 for q in read if not q.answers),
            "squad_skipped": skips.total, "no_phrase_because": dict(reasons.most_common())}


def _reason_kind(reason: str) -> str:
    """A reason with its entity type generalised (``another DATE entity`` -> ``TYPE``)."""
    return re.sub(r"\b[A-Z][A-Z_]+\b", "TYPE", reason or "no reason given")


def examples(scored_path: Path, n: int, threshold_column: str = "keep_test_set"
             ) -> list[dict[str, Any]]:
    """Up to ``n`` example paraphrases: half accepted (best first), half rejected."""
    if n <= 0 or not scored_path.is_file():
        return []
    rows = read_table(scored_path).to_pylist()
    kept = sorted((r for r in rows if r[threshold_column]), key=lambda r: -r["similarity"])
    dropped = sorted((r for r in rows if not r[threshold_column]),
                     key=lambda r: -r["similarity"])
    chosen = kept[: (n + 1) // 2] + dropped[: n // 2]
    return [{**r, "kept": bool(r[threshold_column])} for r in chosen]


def rated_examples(pairs_path: Path, ratings_path: Path, raters: Sequence[str],
                   min_rating: int, n: int) -> list[dict[str, Any]]:
    """Up to ``n`` rated pairs: half accepted by every rater, half rejected, in pair order;
    each with its ratings (``A 5/4, B 5/5``: semantic equivalence / fluency per rater)."""
    if n <= 0 or not pairs_path.is_file() or not ratings_path.is_file():
        return []
    ratings = import_ratings(ratings_path, None, raters, min_rating, on_error="skip").ratings
    rows = [r for r in read_table(pairs_path).to_pylist() if r["squad_id"] in ratings]
    out = []
    for row in rows:
        by_rater = ratings[row["squad_id"]]
        accepted = all(v >= min_rating for scores in by_rater.values() for v in scores.values())
        text = ", ".join(f"{name} {by_rater[name]['semantic_equivalence']}/"
                         f"{by_rater[name]['fluency']}" for name in raters)
        out.append({"original": row["original"], "paraphrase": row["paraphrase"],
                    "ratings": text, "accepted": accepted})
    kept = [r for r in out if r["accepted"]][: (n + 1) // 2]
    dropped = [r for r in out if not r["accepted"]][: n // 2]
    return kept + dropped


def report(stats: Mapping[str, Mapping[str, Any]], scored_path: Path, n_examples: int,
           report_path: Path, metrics_path: Path, notes: Sequence[str] = (),
           adversarial_scored: Path | None = None,
           rated: Mapping[str, tuple[Path, Path]] | None = None,
           raters: Sequence[str] = ("A", "B"), min_rating: int = 4) -> str:
    """Markdown report + metrics JSON + Prefect markdown artifact.

    ``rated`` maps a set name to its (pairs Parquet, filled rating form): the report then shows
    accepted and rejected pairs of each set with their ratings.
    """
    groups = {"Example paraphrases": examples(scored_path, n_examples)}
    if adversarial_scored is not None:
        groups["Example paraphrases with adversarial suggestions"] = examples(
            adversarial_scored, n_examples, "keep_adversarial_augmentation")
    rated_groups = {f"Rated pairs of the `{name}` set (accepted first)": rated_examples(
        pairs, ratings, raters, min_rating, n_examples)
        for name, (pairs, ratings) in (rated or {}).items()}
    return write_report(stats, groups, report_path, metrics_path, notes=notes,
                        rated=rated_groups)


build_ppdb_table_task = artifact_task(build_ppdb_table, outputs=("table_path",),
                                      name="build PPDB table")
training_triples_task = artifact_task(build_training_triples, outputs=("out_path",),
                                      name="training triples")
train_vocab_task = artifact_task(train_vocab, outputs=("vocab_dir",), name="train vocabulary")
train_paraphraser_task = artifact_task(train_paraphraser_model, outputs=("model_dir",),
                                       name="train paraphraser")
suggestions_task = artifact_task(suggest_for_squad, outputs=("out_path",),
                                 name="PPDB suggestions")
similarity_task = artifact_task(score_candidates, outputs=("out_path",),
                                name="similarity filter")
test_set_task = artifact_task(build_test_set, outputs=("out_dir",), parts=("name",),
                              name="test set")
adversarial_task = artifact_task(suggest_adversarial, outputs=("out_path",),
                                 name="adversarial suggestions")
human_eval_task = artifact_task(human_evaluation, outputs=("out_dir", "accepted_dir"),
                                parts=("name",),
                                name="human evaluation")
report_task = task(report, name="paraphrase report")
edits_task = artifact_task(summarise_edits, name="what the paraphrases change")
