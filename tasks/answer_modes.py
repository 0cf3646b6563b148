"""The has_answer modes (answer matching of top-k retrieval accuracy), named in the config.

Config layer: ``retrieval.has_answer_mode`` is validated against these names; the matching
itself is :mod:`tasks.evaluation.has_answer`.
"""

from __future__ import annotations

from typing import Literal, get_args

HasAnswerMode = Literal[
    "eq-string", "eq-string-title", "dpr-string", "dpr-string-title", "title", "regex"
]
MODES: tuple[str, ...] = get_args(HasAnswerMode)
#: The mode of the EntityQuestions tables (``retrieval.has_answer_mode`` in params.yaml).
DEFAULT_MODE: HasAnswerMode = "eq-string"
STRING_MODES = frozenset({"eq-string", "eq-string-title", "dpr-string", "dpr-string-title"})
#: Mode names of earlier versions, rejected with a hint (each had one meaning only).
RENAMED_MODES = {
    "string": "'eq-string' (EntityQuestions) or 'dpr-string' (DPR; what 'string' used to do)",
    "title_string": "'eq-string-title' (EntityQuestions, title + ' ' + text) or "
    "'dpr-string-title' (DPR, title + ' . ' + text; what 'title_string' used to do)",
}


def check_mode(mode: str) -> str:
    """``mode`` itself when it is a valid has_answer mode, else a :class:`ValueError`."""
    if mode in MODES:
        return mode
    hint = ""
    if mode in RENAMED_MODES:
        hint = f" ({mode!r} was split in two: use {RENAMED_MODES[mode]})"
    raise ValueError(
        f"unknown has_answer mode {mode!r}{hint}; valid modes: {', '.join(MODES)}"
    )
