"""Answer matching of the EntityQuestions / DPR retrieval evaluation ("has_answer"), per mode.

Two reference conventions exist and differ on real data; each has its own mode names and is
reproduced exactly (``tests/evaluation/`` holds the minimal cases):

``"eq-string"`` (EntityQuestions ``utils/has_answer_fn.string_match``; the default of the
EntityQuestions tables)
    Every answer is Unicode-NFD-normalised; the passage text is *not* normalised. Both are
    tokenised with the DrQA ``SimpleTokenizer`` (:mod:`tasks.evaluation.tokenizer`), tokens
    lower-cased one by one, and the passage has the answer when one answer's token sequence
    occurs contiguously in the passage's. So the answer ``"é"`` (U+00E9) does *not* match a
    passage holding ``"é"`` (U+00E9): the answer becomes ``e`` + U+0301, the passage keeps U+00E9.

``"eq-string-title"`` (EntityQuestions ``string_title_match``)
    As ``"eq-string"`` over ``f"{title} {text}"``: an answer may span title and text
    (answer ``"a b"``, title ``"a"``, text ``"b"``: match).

``"dpr-string"`` (DPR ``dpr/data/qa_validation.has_answer``, match_type ``string``)
    As ``"eq-string"``, but the passage text is NFD-normalised too (``_normalize``), so NFC and
    NFD spellings match each other.

``"dpr-string-title"`` (DPR ``check_answer_from_meta(use_title=True)``)
    As ``"dpr-string"`` over ``title + " . " + text``: the ``.`` token means an answer never
    spans title and text (answer ``"a b"``, title ``"a"``, text ``"b"``: no match).

``"title"`` (EntityQuestions ``normalized_title``)
    ``title.lower().strip().startswith(answer.lower().strip())`` for some answer: a character
    prefix test, no NFD, no tokenisation (``"Paris"`` matches the title ``"Parisian"``).

``"regex"`` (DPR ``has_answer``, match_type ``regex``)
    Each answer is NFD-normalised and compiled with the ``regex`` module and the flags
    ``IGNORECASE + UNICODE + MULTILINE``; the passage has the answer when the pattern is found
    anywhere in the NFD-normalised text. A pattern that does not compile matches nothing, as in
    DPR (a warning is logged once per pattern); ``on_invalid_regex="raise"`` raises instead.
    EntityQuestions' own regex mode cannot be reproduced: it raises ``TypeError`` on every
    passage (``regex_match(text, answer)`` indexes the text string with ``'text'``).

In every string mode an answer with no tokens (``""``, ``"  "``) matches every passage, as in
both references (their sliding window compares ``[] == []``).

Deliberate deviations (the references crash there): a passage whose text is ``None`` never has
an answer (DPR's "no doc in db" branch), a ``None`` title counts as ``""`` in the title + text
modes and never matches in ``"title"`` mode.

Batch judging of whole runs (each passage tokenised at most once per run): :mod:`.judge`.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Literal

import regex

# The mode names live in the config layer; re-exported here beside the matching they name.
from tasks.answer_modes import (  # noqa: F401
    DEFAULT_MODE,
    MODES,
    RENAMED_MODES,
    STRING_MODES,
    HasAnswerMode,
    check_mode,
)
from tasks.evaluation.tokenizer import words

logger = logging.getLogger(__name__)

InvalidRegexPolicy = Literal["no_match", "raise"]

#: How each title + text mode joins title and text.
TITLE_TEXT_SEPARATORS = {"eq-string-title": " ", "dpr-string-title": " . "}
#: Flags of DPR's ``regex_match``.
REGEX_FLAGS = regex.IGNORECASE + regex.UNICODE + regex.MULTILINE

_warned_patterns: set[str] = set()


def nfd(text: str) -> str:
    """Unicode NFD normalisation (the references' ``normalize`` / ``_normalize``)."""
    return unicodedata.normalize("NFD", text)


def normalize_answers(answers: Iterable[str]) -> list[list[str]]:
    """Each answer NFD-normalised and tokenised into lower-cased token texts."""
    return [words(nfd(answer)) for answer in answers]


def string_source(title: str | None, text: str | None, mode: str) -> str | None:
    """The string a string mode tokenises for a passage; ``None`` when it has no text."""
    if text is None:
        return None
    separator = TITLE_TEXT_SEPARATORS.get(mode)
    if separator is not None:
        text = (title or "") + separator + text
    return nfd(text) if mode.startswith("dpr-") else text


def _joined(tokens: Sequence[str]) -> str:
    # Tokens never contain a space, so " a b " in " x a b y " <=> contiguous token match.
    # An answer without tokens matches everything: "" is a substring of every string.
    return f" {' '.join(tokens)} " if tokens else ""


def joined_tokens(source: str) -> str:
    """The lower-cased tokens of ``source`` joined and padded by spaces (see :func:`_joined`)."""
    return f" {' '.join(words(source))} "


def _compile_answer_regex(pattern: str, on_invalid_regex: InvalidRegexPolicy):
    try:
        return regex.compile(nfd(pattern), flags=REGEX_FLAGS)
    except Exception as err:  # DPR catches everything here and reports "no match"
        if on_invalid_regex == "raise":
            raise ValueError(f"invalid answer regex {pattern!r}: {err}") from err
        if pattern not in _warned_patterns:
            _warned_patterns.add(pattern)
            logger.warning("answer regex %r does not compile (%s): it matches nothing",
                           pattern, err)
        return None


def prepare_answers(answers: Sequence[str], mode: str,
                    on_invalid_regex: InvalidRegexPolicy = "no_match") -> tuple:
    """One question's answers in the form ``mode`` compares (duplicates dropped, order kept).

    String modes: ``(screens, joined)``, ``joined`` the answers' padded token strings and
    ``screens`` one :func:`answer_screen` per answer; ``screens`` is ``None`` when some answer
    has no token (then every passage with text matches).
    ``"title"``: lower-cased stripped prefixes. ``"regex"``: compiled patterns.
    """
    if isinstance(answers, str):
        raise TypeError("answers must be a sequence of strings, not a single string")
    if on_invalid_regex not in ("no_match", "raise"):
        raise ValueError(
            f"on_invalid_regex must be 'no_match' or 'raise', not {on_invalid_regex!r}"
        )
    if mode == "title":
        return tuple(dict.fromkeys(answer.lower().strip() for answer in answers))
    if mode == "regex":
        compiled = (_compile_answer_regex(a, on_invalid_regex) for a in dict.fromkeys(answers))
        return tuple(p for p in compiled if p is not None)
    check_mode(mode)
    token_lists = normalize_answers(dict.fromkeys(answers))
    joined = tuple(dict.fromkeys(_joined(tokens) for tokens in token_lists))
    if any(not tokens for tokens in token_lists):
        return None, joined
    decomposed = mode.startswith("dpr-")
    screens = (answer_screen(tokens, decomposed) for tokens in token_lists)
    return tuple(dict.fromkeys(screens)), joined


_ASCII_RUNS = regex.compile(r"[\x00-\x7f]+")


def answer_screen(tokens: Sequence[str], decomposed: bool = False
                  ) -> tuple[tuple[bytes, ...], tuple[str, ...]]:
    """What a passage must contain for the answer with these (lower-cased) tokens to match.

    ``(runs, others)``: ``runs`` the maximal ASCII runs of the tokens as UTF-8 bytes, longest
    first, each a substring of the passage's raw UTF-8 bytes with ASCII lower-cased
    (``text.encode().lower()``); ``others`` the tokens without any ASCII character, each a
    substring of the lower-cased text the mode tokenises. Necessary, not sufficient.

    ``decomposed`` (the DPR modes, which tokenise the NFD text): NFD turns a precomposed
    character into an ASCII base letter + combining marks, so a run's last character is dropped
    when a non-ASCII character follows it in the token; the runs then hold in the raw text.
    Valid for passages without the code points of ``judge.SCREEN_BREAKERS``.
    """
    runs: set[bytes] = set()
    for token in tokens:
        for match in _ASCII_RUNS.finditer(token):
            run = match.group()
            if decomposed and match.end() < len(token):
                run = run[:-1]
            if run:
                runs.add(run.encode())
    others = {token for token in tokens if not _ASCII_RUNS.search(token)}
    return (tuple(sorted(runs, key=len, reverse=True)),
            tuple(sorted(others, key=len, reverse=True)))


def contains_token_sequence(passage_tokens: Sequence[str], answer_tokens: Sequence[str]) -> bool:
    """Whether ``answer_tokens`` occurs contiguously in ``passage_tokens`` (empty: True)."""
    n = len(answer_tokens)
    if n == 0:
        return True
    tokens = list(passage_tokens)
    answer = list(answer_tokens)
    first = answer[0]
    last_start = len(tokens) - n
    start = 0
    while start <= last_start:
        try:
            start = tokens.index(first, start, last_start + 1)
        except ValueError:
            return False
        if tokens[start : start + n] == answer:
            return True
        start += 1
    return False


def passage_has_answer(
    answers: Sequence[str],
    passage_text: str | None,
    title: str | None = "",
    mode: HasAnswerMode = DEFAULT_MODE,
    *,
    on_invalid_regex: InvalidRegexPolicy = "no_match",
) -> bool:
    """Whether one passage has any of ``answers`` (raw answer strings) under ``mode``."""
    check_mode(mode)
    prepared = prepare_answers(answers, mode, on_invalid_regex)
    if mode == "title":
        return title is not None and title.lower().strip().startswith(prepared)
    if passage_text is None:
        return False
    if mode == "regex":
        text = nfd(passage_text)
        return any(pattern.search(text) is not None for pattern in prepared)
    padded = joined_tokens(string_source(title, passage_text, mode))
    return any(answer in padded for answer in prepared[1])


def has_answer_matrix(
    answers_per_question: Sequence[Sequence[str]],
    ranked_passage_ids: Sequence[Sequence[Hashable]],
    passages: Mapping[Hashable, tuple[str | None, str | None]],
    mode: HasAnswerMode = DEFAULT_MODE,
    *,
    on_invalid_regex: InvalidRegexPolicy = "no_match",
    workers: int | None = 1,
) -> list[list[bool]]:
    """``result[q][r]``: whether the passage at rank ``r`` for question ``q`` has an answer.

    Every rank is judged; :func:`tasks.evaluation.judge.judge_run` judges only what is needed
    for top-k accuracy and the written result JSON. ``passages`` maps a passage id to
    ``(title, text)``; a missing id raises ``KeyError``.
    """
    from tasks.evaluation.judge import judge_rows

    if len(answers_per_question) != len(ranked_passage_ids):
        raise ValueError(
            f"{len(answers_per_question)} answer lists but {len(ranked_passage_ids)} ranked "
            "passage lists: expected one of each per question"
        )
    judged = judge_rows(answers_per_question, ranked_passage_ids, passages, mode,
                        result_ctxs=None, on_invalid_regex=on_invalid_regex, workers=workers)
    return [list(j.has_answer) for j in judged]
