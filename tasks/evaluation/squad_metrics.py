"""SQuAD v1.1 exact match and F1, as the official ``evaluate-v1.1.py`` computes them.

- ``normalize_answer``: lower-case; remove every character of ``string.punctuation`` (ASCII
  only: ``¿``, ``–``, ``’`` and other non-ASCII punctuation stay); replace the articles
  ``\\b(a|an|the)\\b`` (standard-library ``re``, Unicode word boundaries) by a space; collapse
  white space with ``" ".join(text.split())``.
- F1 over white-space tokens of the normalised strings with a multiset (``Counter``) overlap;
  0 when nothing overlaps (so two answers that both normalise to ``""`` get EM 1 but F1 0).
- A question's score is the max over its gold answers.
- Totals are ``100.0 * sum / total`` where ``total`` counts **every** question of the dataset:
  a question without a prediction scores 0 and is reported ("Unanswered question <id> will
  receive score 0.", logged as a warning and listed in ``SquadScores.missing_ids``).
  Predictions for ids not in the dataset are ignored. Sums run in dataset order with the same
  arithmetic as the script, so the totals are bit-identical.
- A question with no gold answer makes the official script crash (``max`` of an empty list);
  here it raises a :class:`ValueError` naming the question.
"""

from __future__ import annotations

import logging
import re
import string
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

logger = logging.getLogger(__name__)

_PUNCTUATION_TABLE = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(s: str) -> str:
    """Lower text and remove punctuation, articles and extra white space (official v1.1)."""
    text = s.lower().translate(_PUNCTUATION_TABLE)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def f1_score(prediction: str, ground_truth: str) -> float:
    """Token F1 of two normalized answers, tokens counted as a multiset (official v1.1)."""
    prediction_tokens = normalize_answer(prediction).split()
    ground_truth_tokens = normalize_answer(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    return (2 * precision * recall) / (precision + recall)


def exact_match_score(prediction: str, ground_truth: str) -> bool:
    """Whether the two answers are equal after normalization (official v1.1)."""
    return normalize_answer(prediction) == normalize_answer(ground_truth)


def metric_max_over_ground_truths(
    metric_fn: Callable[[str, str], Any], prediction: str, ground_truths: Sequence[str]
):
    """The best score of ``prediction`` against any of the gold answers (official v1.1)."""
    return max(metric_fn(prediction, ground_truth) for ground_truth in ground_truths)


@dataclass(frozen=True)
class SquadScores:
    """Totals in percent, as the official script prints them."""

    exact_match: float
    f1: float
    n_questions: int
    n_missing: int
    missing_ids: tuple[str, ...]

    def as_official_dict(self) -> dict[str, float]:
        return {"exact_match": self.exact_match, "f1": self.f1}


def iter_squad_v11(dataset_json: Mapping[str, Any]) -> Iterator[tuple[str, list[str]]]:
    """``(question id, gold answer texts)`` from a parsed SQuAD v1.1 file, in file order.

    Accepts the whole file (``{"version", "data": [...]}``) or its ``data`` list.
    """
    articles = dataset_json["data"] if isinstance(dataset_json, Mapping) else dataset_json
    for article in articles:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                yield qa["id"], [answer["text"] for answer in qa["answers"]]


def _scored(
    dataset: Iterable[tuple[str, Sequence[str]]], predictions: Mapping[str, str]
) -> Iterator[tuple[str, bool | None, float | None]]:
    """``(id, em, f1)`` per question in dataset order; ``em``/``f1`` are None when unanswered."""
    for question_id, ground_truths in dataset:
        if isinstance(ground_truths, str):
            raise TypeError(f"gold answers of question {question_id!r} must be a list of strings")
        if question_id not in predictions:
            yield question_id, None, None
            continue
        if len(ground_truths) == 0:
            raise ValueError(
                f"question {question_id!r} has no gold answer (the official script crashes)"
            )
        prediction = predictions[question_id]
        em = metric_max_over_ground_truths(exact_match_score, prediction, ground_truths)
        f1 = metric_max_over_ground_truths(f1_score, prediction, ground_truths)
        yield question_id, em, f1


def evaluate_squad(
    dataset: Iterable[tuple[str, Sequence[str]]], predictions: Mapping[str, str]
) -> SquadScores:
    """Totals of the official v1.1 script over ``(question id, gold answer texts)`` pairs."""
    f1 = exact_match = total = 0
    missing: list[str] = []
    for question_id, em_q, f1_q in _scored(dataset, predictions):
        total += 1
        if em_q is None:
            logger.warning("Unanswered question %s will receive score 0.", question_id)
            missing.append(question_id)
            continue
        exact_match += em_q
        f1 += f1_q
    if total == 0:
        raise ValueError("SQuAD evaluation over zero questions (the official script divides by 0)")
    return SquadScores(
        exact_match=100.0 * exact_match / total,
        f1=100.0 * f1 / total,
        n_questions=total,
        n_missing=len(missing),
        missing_ids=tuple(missing),
    )


def per_question_scores(
    dataset: Iterable[tuple[str, Sequence[str]]], predictions: Mapping[str, str]
) -> dict[str, tuple[float, float]]:
    """``id -> (em, f1)`` with em in {0.0, 1.0} and f1 in [0, 1]; unanswered questions (0, 0).

    For paired comparisons (original vs paraphrased questions). If an id repeats in the
    dataset, the last occurrence wins here (the totals count every occurrence).
    """
    return {
        question_id: (0.0, 0.0) if em is None else (float(em), float(f1))
        for question_id, em, f1 in _scored(dataset, predictions)
    }
