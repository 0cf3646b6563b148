"""Turn a retrieval run into DPR-style results and top-k accuracy per relation file (judged by
:func:`tasks.evaluation.judge.judge_run`, one call for all relations)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tasks.evaluation.has_answer import DEFAULT_MODE, HasAnswerMode, check_mode
from tasks.evaluation.judge import judge_run
from tasks.evaluation.topk import macro_average, topk_accuracy
from tasks.io.entityquestions import EQQuestion
from tasks.io.passages import iter_passages

Run = Mapping[str, Sequence[tuple[str, float]]]


def question_id(relation: str, index: int) -> str:
    """The id of the ``index``-th question of a relation file in runs (``P19:000017``)."""
    return f"{relation}:{index:06d}"


def passages_by_id(passages_tsv: Path, wanted: Iterable[str]) -> dict[str, tuple[str, str]]:
    """``{id: (title, text)}`` for the wanted ids only, streaming ``psgs_w100.tsv`` once.

    Memory grows with the retrieved passages, not the collection (21M passages for real runs).
    A wanted id that the file lacks is an error: the run and the collection disagree. An id
    that the file holds twice is :func:`~tasks.io.passages.iter_passages`' error (which text
    did the run retrieve?).
    """
    wanted = set(wanted)
    found: dict[str, tuple[str, str]] = {}
    for passage in iter_passages(passages_tsv):
        if passage.id in wanted:
            found[passage.id] = (passage.title, passage.text)
            if len(found) == len(wanted):
                break
    missing = wanted - found.keys()
    if missing:
        raise KeyError(f"{passages_tsv}: the run retrieved {len(missing)} passage id(s) not in "
                       f"the collection, e.g. {sorted(missing)[:5]}")
    return found


@dataclass
class RelationEvaluation:
    """Evaluation of one relation file: ranked hits and the accuracy at each k.

    ``has_answer[q]`` holds the flags of the first ``result_ctxs`` passages of question ``q``
    (all of them when ``result_ctxs`` was ``None``); ``first_hits[q]`` is over the whole run.
    """

    relation: str
    questions: list[EQQuestion]
    ranked: list[list[tuple[str, float]]]
    has_answer: list[list[bool]]
    first_hits: list[int | None]
    accuracy: dict[int, float]


def evaluate_relations(run: Run, questions: Mapping[str, list[EQQuestion]],
                       passages: Mapping[str, tuple[str, str]], ks: Sequence[int],
                       mode: HasAnswerMode = DEFAULT_MODE, result_ctxs: int | None = None,
                       workers: int | None = None) -> dict[str, RelationEvaluation]:
    """Score every relation file's questions against the run (qids from :func:`question_id`).

    All relations are judged in one :func:`~tasks.evaluation.judge.judge_run` call, so a
    passage retrieved for questions of several relations is tokenised once.
    """
    check_mode(mode)
    ranked: dict[tuple[str, int], list[tuple[str, float]]] = {}
    answers: dict[tuple[str, int], list[str]] = {}
    for relation, items in questions.items():
        for i, question in enumerate(items):
            ranked[relation, i] = list(run.get(question_id(relation, i), ()))
            answers[relation, i] = question.answers
    judged = judge_run({key: [pid for pid, _ in hits] for key, hits in ranked.items()}, answers,
                       passages, mode, result_ctxs, workers=workers)
    evaluations: dict[str, RelationEvaluation] = {}
    for relation, items in questions.items():
        keys = [(relation, i) for i in range(len(items))]
        firsts = [judged[key].first_hit for key in keys]
        evaluations[relation] = RelationEvaluation(
            relation, list(items), [ranked[key] for key in keys],
            [list(judged[key].has_answer) for key in keys], firsts, topk_accuracy(firsts, ks))
    return evaluations


def summarise(evaluations: Mapping[str, RelationEvaluation], retriever: str,
              mode: str) -> dict:
    """Metrics JSON for ``dvc metrics``: macro average and per-relation accuracy (percent)."""
    per_relation = {r: e.accuracy for r, e in evaluations.items()}
    macro = macro_average(per_relation)

    def pct(acc: Mapping[int, float]) -> dict[str, float]:
        return {f"top{k}": round(100 * v, 2) for k, v in acc.items()}

    return {
        "retriever": retriever,
        "has_answer_mode": mode,
        "questions": sum(len(e.questions) for e in evaluations.values()),
        "macro": pct(macro),
        "per_relation": {r: pct(a) for r, a in per_relation.items()},
    }
