"""Score any model's SQuAD v1.1 predictions (``qastress eval squad DATA PREDICTIONS``).

The dataset is read with :func:`tasks.io.squad.read_squad` (every answer's ``answer_start`` must
point at its text in the context: a mismatch is a :class:`DataFormatError` naming the file,
record and question id) and must be version ``1.1`` (a SQuAD 2.0 file is refused: its
unanswerable questions have no v1.1 score). Predictions are ``{question_id: answer_text}``
(:func:`tasks.io.squad_predictions.read_predictions`: anything else is an error naming the file
and id).
EM/F1 are the official v1.1 script's (:mod:`tasks.evaluation.squad_metrics`); a question without
a prediction scores 0 and is listed; predictions for ids not in the dataset are ignored and
counted. A dataset without questions (no EM/F1: the official script divides by zero) is a
:class:`DataFormatError` naming its file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tasks.evaluation.squad_metrics import evaluate_squad, iter_squad_v11, per_question_scores
from tasks.io.errors import DataFormatError, preview
from tasks.io.squad import SquadDataset, read_squad
from tasks.io.squad_predictions import read_predictions

SQUAD_VERSION = "1.1"


@dataclass(frozen=True)
class ScoreReport:
    """Official totals plus what was missing or extra."""

    exact_match: float
    f1: float
    n_questions: int
    missing_ids: tuple[str, ...]
    extra_ids: tuple[str, ...]

    def as_dict(self) -> dict:
        """JSON-ready: the official keys first, then the counts and the ids."""
        return {"exact_match": self.exact_match, "f1": self.f1,
                "questions": self.n_questions, "missing": len(self.missing_ids),
                "missing_ids": list(self.missing_ids), "extra": len(self.extra_ids),
                "extra_ids": list(self.extra_ids)}


def read_squad_v11(path: str | Path) -> SquadDataset:
    """Read and validate a SQuAD file that must be version 1.1."""
    dataset = read_squad(path)
    if dataset.version.lstrip("v") != SQUAD_VERSION:
        raise DataFormatError(path, "top level", f"a SQuAD v{SQUAD_VERSION} file (version "
                              f"'{SQUAD_VERSION}')", f"version {preview(dataset.version)}")
    for question in dataset.questions():
        if not question.answers:
            raise DataFormatError(path, f"question id {question.id!r}",
                                  "at least one gold answer (SQuAD v1.1)", "no answers")
    return dataset


def _require_questions(dataset: SquadDataset) -> None:
    """A dataset without questions has no EM/F1 (the official script divides by zero)."""
    if len(dataset) == 0:
        raise DataFormatError(dataset.path or "<squad>", "top level", "at least one question",
                              "none")


def score_predictions(dataset: SquadDataset, predictions: Mapping[str, str]) -> ScoreReport:
    """EM/F1 (percent) of ``predictions`` over every question of ``dataset``.

    A dataset without questions raises :class:`DataFormatError` naming its file.
    """
    _require_questions(dataset)
    scores = evaluate_squad(iter_squad_v11(dataset.raw), predictions)
    known = {qid for qid, _ in iter_squad_v11(dataset.raw)}
    extra = tuple(qid for qid in predictions if qid not in known)
    return ScoreReport(scores.exact_match, scores.f1, scores.n_questions, scores.missing_ids,
                       extra)


def score_prediction_file(data_path: str | Path, predictions_path: str | Path) -> ScoreReport:
    """:func:`score_predictions` of two files (both validated first, the dataset first: a
    file without questions is an error naming it)."""
    dataset = read_squad_v11(data_path)
    _require_questions(dataset)
    return score_predictions(dataset, read_predictions(predictions_path))


def question_scores(dataset: SquadDataset, predictions: Mapping[str, str]
                    ) -> list[tuple[float, float]]:
    """``(em, f1)`` per question in file order (0, 0 when unanswered), for paired tests."""
    by_id = per_question_scores(iter_squad_v11(dataset.raw), predictions)
    return [by_id[q.id] for q in dataset.questions()]
