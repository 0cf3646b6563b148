"""PAQ-like training questions: one generated question per passage over a large passage sample.

PAQ (Lewis et al., 2021) generates ~65M questions with a trained pipeline (answer extraction ->
BART question generation -> filtering by a reader); a passage encoder trained on it has seen
questions about a broad share of the passages. This is a deliberately simple, documented
stand-in that works from files only, so it runs on the demo world and on real data alike:

1. draw a seeded sample of ``n_passages`` rows of ``psgs_w100.tsv``;
2. for each sampled passage, take the facts (T-REx-derived facts table of the entity-questions
   flow: ``relation, subject_id, subject_label, object_ids, answers``) whose subject is the
   passage's title entity and whose answer the passage states (DPR's string match,
   :func:`tasks.evaluation.has_answer.passage_has_answer`); facts of the excluded splits
   (default: the EntityQuestions test subjects, so no test question is generated) are left out;
3. pick one of them (seeded) and render it with the relation's question template
   (:func:`tasks.questions.templates.render_question`): the generated question; the passage is
   its positive context.

Passages whose title entity has no stated fact get no question; they are counted by reason,
never dropped silently. No hard negatives are written (``hard_negative_ctxs: []``): the
bi-encoder then trains on in-batch negatives only. Unlike PAQ, the questions come from
templates, not a learned generator, and only facts about the passage's title entity are used.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks.evaluation.has_answer import passage_has_answer
from tasks.io.dpr import DprCtx, DprExample, write_dpr_examples
from tasks.io.errors import MissingInputError
from tasks.io.passages import count_passages, iter_passages
from tasks.io.tables import read_table
from tasks.orchestration import artifact_task
from tasks.questions.linking import normalise_tokens
from tasks.questions.templates import render_question
from tasks.relation_templates import load_templates

#: Columns the facts table must have (``tasks.questions.facts.FACTS_SCHEMA``).
FACT_COLUMNS = ("relation", "subject_id", "subject_label", "answers")
#: Columns of the split table used to exclude facts (``tasks.questions.splits``).
SPLIT_COLUMNS = ("relation", "subject_id", "split")
DATASET = "paq-like"


@dataclass(frozen=True, slots=True)
class _Fact:
    relation: str
    subject_id: str
    subject_label: str
    answers: tuple[str, ...]


def _columns(path: Path, wanted: Sequence[str], what: str) -> dict[str, list[Any]]:
    if not Path(path).is_file():
        raise MissingInputError(f"{path}: no {what} (run the entity-questions flow first)")
    table = read_table(path)
    missing = [c for c in wanted if c not in table.column_names]
    if missing:
        raise ValueError(f"{path}: {what} lacks column(s) {missing}; expected columns "
                         f"{list(wanted)}, found {table.column_names}")
    return table.select(list(wanted)).to_pydict()


def load_title_facts(facts_table: Path, splits_table: Path | None = None,
                     exclude_splits: Sequence[str] = ("test",)) -> tuple[
                         dict[tuple[str, ...], list[_Fact]], Counter]:
    """Facts with a question template, by the normalised tokens of their subject label; facts
    of ``exclude_splits`` (by ``splits_table``) are left out and counted."""
    facts = _columns(facts_table, FACT_COLUMNS, "facts table")
    excluded: set[tuple[str, str]] = set()
    if splits_table is not None and exclude_splits:
        splits = _columns(splits_table, SPLIT_COLUMNS, "split table")
        excluded = {(r, s) for r, s, split in zip(splits["relation"], splits["subject_id"],
                                                  splits["split"], strict=True)
                    if split in exclude_splits}
    templates = load_templates()
    counts: Counter = Counter()
    by_subject: dict[tuple[str, ...], list[_Fact]] = {}
    for index, (relation, subject_id, label, answers) in enumerate(zip(
            *(facts[c] for c in FACT_COLUMNS), strict=True)):
        if not label or not answers:
            raise ValueError(f"{facts_table}: fact {index} ({relation} {subject_id}) has no "
                             "subject label or no answers; expected both non-empty")
        if relation not in templates:
            counts["facts without a question template"] += 1
            continue
        if (relation, subject_id) in excluded:
            counts["facts of excluded splits"] += 1
            continue
        key = normalise_tokens(label)
        if not key:  # a label of punctuation only: no passage title can match it
            counts["facts whose subject label has no word"] += 1
            continue
        by_subject.setdefault(key, []).append(_Fact(relation, subject_id, label, tuple(answers)))
    return by_subject, counts


def sample_rows(total: int, n_passages: int, seed: int) -> list[int]:
    """``min(n_passages, total)`` distinct row numbers of ``total`` passages (sorted, seeded)."""
    if n_passages < 1:
        raise ValueError(f"n_passages must be >= 1, not {n_passages}")
    return sorted(random.Random(seed).sample(range(total), min(n_passages, total)))


def generate_paq_like(passages_tsv: Path, facts_table: Path, out_json: Path, n_passages: int,
                      seed: int = 0, splits_table: Path | None = None,
                      exclude_splits: Sequence[str] = ("test",)) -> dict[str, Any]:
    """Write one generated question per sampled passage that states a fact about its title
    entity as DPR training JSON (positive = that passage); return the counts.

    Raises when the passages or facts are missing or malformed, or when no question at all
    could be generated (nothing to train on)."""
    passages_tsv = Path(passages_tsv)
    if not passages_tsv.is_file():
        raise FileNotFoundError(f"{passages_tsv}: no passage file (psgs_w100.tsv)")
    by_subject, counts = load_title_facts(facts_table, splits_table, exclude_splits)
    total = count_passages(passages_tsv)
    if total == 0:
        raise ValueError(f"{passages_tsv}: no passages to generate questions from")
    rows = set(sample_rows(total, n_passages, seed))
    rng = random.Random(seed)
    examples: list[DprExample] = []
    relations: Counter = Counter()
    for row, passage in enumerate(iter_passages(passages_tsv)):
        if row not in rows:
            continue
        candidates = by_subject.get(normalise_tokens(passage.title), [])
        if not candidates:
            counts["passages without a fact about their title entity"] += 1
            continue
        stated = [f for f in candidates if passage_has_answer(f.answers, passage.text)]
        if not stated:
            counts["passages stating no answer of their title entity's facts"] += 1
            continue
        fact = stated[rng.randrange(len(stated))]
        relations[fact.relation] += 1
        examples.append(DprExample(
            DATASET, render_question(fact.relation, fact.subject_label), fact.answers,
            (DprCtx(passage.title, passage.text, 1.0, None, passage.id),)))
    if not examples:
        raise ValueError(f"{passages_tsv} + {facts_table}: no question generated from "
                         f"{len(rows)} sampled passages ({dict(counts)}); expected passages "
                         "titled with a fact's subject that state its answer")
    write_dpr_examples(out_json, examples)
    return {"passages": total, "sampled": len(rows), "questions": len(examples),
            "skipped": dict(sorted(counts.items())), "relations": dict(sorted(relations.items())),
            "seed": seed, "exclude_splits": list(exclude_splits)}


generate_paq_like_task = artifact_task(generate_paq_like, outputs=("out_json",),
                                       name="generate PAQ-like questions")
