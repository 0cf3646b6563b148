"""SQuAD prediction files: ``{question_id: answer_text}``, one JSON object.

Read with the SQuAD reader's JSON loading (:mod:`tasks.io.squad`): a question id given twice is
an error naming the ids, not resolved silently to the last answer. Written atomically (UTF-8,
non-ASCII kept).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tasks.io.atomic import write_json
from tasks.io.errors import DataFormatError, SkipCounter, handle, preview
from tasks.io.squad import load_strict_json


def read_predictions(path: str | Path, on_error: str = "raise",
                     skips: SkipCounter | None = None) -> dict[str, str]:
    """Read a predictions file ``{question_id: answer_text}``.

    Raises :class:`DataFormatError` when the file is not a JSON object or has a question id
    more than once (naming the ids); a non-string answer raises too, or with
    ``on_error="skip"`` is counted in ``skips`` and left out.
    """
    raw = load_strict_json(path, top_level_keys="question id")
    if not isinstance(raw, dict):
        raise DataFormatError(path, "top level", "a JSON object {question_id: answer_text}",
                              f"a {type(raw).__name__}")
    predictions: dict[str, str] = {}
    for qid, answer in raw.items():
        if not isinstance(answer, str):
            handle(DataFormatError(path, f"question id {qid!r}", "a string answer text",
                                   preview(answer)), on_error, skips)
            continue
        predictions[qid] = answer
    return predictions


def write_predictions(path: str | Path, predictions: Mapping[str, str]) -> Path:
    """Atomically write ``{question_id: answer_text}`` as JSON (UTF-8, non-ASCII kept)."""
    for qid, answer in predictions.items():
        if not isinstance(qid, str) or not isinstance(answer, str):
            raise TypeError(f"predictions must map str ids to str answers: {qid!r}: {answer!r}")
    return write_json(path, dict(predictions))
