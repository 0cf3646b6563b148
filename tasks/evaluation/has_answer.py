"""Answer matching of the DPR / EntityQuestions retrieval evaluation ("has_answer").

Semantics follow the reference code exactly:

``"string"`` (DPR ``qa_validation.has_answer``, match_type ``string``; the default of the
EntityQuestions tables)
    The passage text and every answer are Unicode-NFD-normalised and tokenised with the
    ``SimpleTokenizer`` (:mod:`tasks.evaluation.tokenizer`), tokens lower-cased one by one. The
    passage has the answer when one answer's token sequence occurs contiguously in the passage's
    token sequence. An answer with no tokens at all (``""``, ``"  "``) matches every passage,
    exactly as in the reference (its sliding window loop compares ``[] == []``).

``"title_string"`` (DPR ``check_answer_from_meta(use_title=True)``)
    As ``"string"`` over ``title + " . " + text``. Note the reference joins with ``" . "``, not
    ``" "``: the ``.`` token means an answer never spans the end of the title and the start of
    the text (``title="New"``, ``text="York"``, answer ``"New York"``: no match).

``"title"`` (EntityQuestions ``utils/has_answer_fn.normalized_title``)
    ``title.lower().strip().startswith(answer.lower().strip())``: a character prefix test, no NFD,
    no tokenisation (``"Paris"`` matches the title ``"Parisian"``; ``""`` matches every title).

``"regex"`` (DPR ``has_answer``, match_type ``regex``)
    Each answer is NFD-normalised and compiled with the ``regex`` module and the flags
    ``IGNORECASE + UNICODE + MULTILINE``; the passage has the answer when the pattern is found
    (``search``) anywhere in the NFD-normalised passage text. DPR silently treats a pattern that
    does not compile as "no match"; that is the default here too
    (``on_invalid_regex="no_match"``, a warning is logged once per pattern), and
    ``on_invalid_regex="raise"`` raises a :class:`ValueError` naming the pattern instead.

A passage whose text is ``None`` never has the answer (DPR's "no doc in db" branch).

``nfd_passage=False`` reproduces the EntityQuestions ``utils/has_answer_fn.string_match``
variant, which NFD-normalises the answers but not the passage text (an NFC ``"Zürich"`` in a
passage then does not match the answer ``"Zürich"``). DPR normalises both; that is the default.

Implementation: every distinct passage id is looked up and tokenised once per
:func:`has_answer_matrix` call, however many questions retrieved it, and every question's
answers once. The token sequences are joined with single spaces and padded with a space on both
sides (tokens never contain a space: separators are not tokens and ``str.lower`` never produces
one), so "the answer's tokens occur contiguously" becomes a C-speed substring test of
``" a1 a2 "`` in ``" p1 p2 ... pn "``. Before it, a set test skips passages that lack, for
every answer of the question, that answer's longest token (a necessary condition for a match).
Memory stays proportional to the number of (question, rank) pairs, not to the passage texts:
passages are processed one distinct id at a time.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Hashable, Iterable, Mapping, Sequence
from itertools import chain, pairwise
from typing import Literal, get_args

import regex

from tasks.evaluation.tokenizer import words

logger = logging.getLogger(__name__)

HasAnswerMode = Literal["string", "title_string", "title", "regex"]
MODES: tuple[str, ...] = get_args(HasAnswerMode)
InvalidRegexPolicy = Literal["no_match", "raise"]

#: How DPR joins title and text in the title + text mode.
TITLE_TEXT_SEPARATOR = " . "
#: Flags of DPR's ``regex_match``.
REGEX_FLAGS = regex.IGNORECASE + regex.UNICODE + regex.MULTILINE

_warned_patterns: set[str] = set()


def nfd(text: str) -> str:
    """Unicode NFD normalisation (DPR's ``_normalize``)."""
    return unicodedata.normalize("NFD", text)


def normalize_answers(answers: Iterable[str]) -> list[list[str]]:
    """Each answer NFD-normalised and tokenised into lower-cased token texts."""
    return [words(nfd(answer)) for answer in answers]


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"unknown has_answer mode {mode!r}; expected one of {', '.join(MODES)}")


def _joined(tokens: Sequence[str]) -> str:
    # An answer without tokens matches everything: "" is a substring of every string.
    return f" {' '.join(tokens)} " if tokens else ""


def _compile_answer_regex(pattern: str, on_invalid_regex: InvalidRegexPolicy):
    normalized = nfd(pattern)
    try:
        return regex.compile(normalized, flags=REGEX_FLAGS)
    except Exception as err:  # DPR catches everything here and reports "no match"
        if on_invalid_regex == "raise":
            raise ValueError(f"invalid answer regex {pattern!r}: {err}") from err
        if pattern not in _warned_patterns:
            _warned_patterns.add(pattern)
            logger.warning(
                "answer regex %r does not compile (%s): it matches nothing", pattern, err
            )
        return None


def _prepare_answers(
    answers: Sequence[str], mode: str, on_invalid_regex: InvalidRegexPolicy
) -> tuple:
    """Per-question answer form for ``mode``; duplicates dropped, order kept."""
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
    return tuple(dict.fromkeys(_joined(tokens) for tokens in normalize_answers(answers)))


def _passage_form(title: str | None, text: str | None, mode: str, nfd_passage: bool):
    """The passage as the mode compares it; ``None`` when it can never have an answer."""
    if mode == "title":
        return None if title is None else title.lower().strip()
    if text is None:
        return None
    if mode == "regex":
        return nfd(text)
    return f" {' '.join(_passage_tokens(title, text, mode, nfd_passage))} "


def _passage_tokens(title: str | None, text: str, mode: str, nfd_passage: bool) -> list[str]:
    """Lower-cased tokens of the passage in the string modes."""
    if mode == "title_string":
        text = (title or "") + TITLE_TEXT_SEPARATOR + text
    if nfd_passage:
        text = nfd(text)
    return words(text)


def _prefilter_keys(joined_answers: tuple[str, ...]) -> frozenset[str] | None:
    """One token per answer (its longest) that a passage must contain for that answer to match.

    ``None`` when some answer has no token (it matches everything, so nothing can be skipped).
    """
    keys = set()
    for joined in joined_answers:
        if not joined:
            return None
        keys.add(max(joined.split(), key=len))
    return frozenset(keys)


def _matches(prepared: tuple, form: str, mode: str) -> bool:
    if mode == "title":
        return form.startswith(prepared)  # False for an empty tuple
    if mode == "regex":
        return any(pattern.search(form) is not None for pattern in prepared)
    return any(answer in form for answer in prepared)


def contains_token_sequence(passage_tokens: Sequence[str], answer_tokens: Sequence[str]) -> bool:
    """Whether ``answer_tokens`` occurs contiguously in ``passage_tokens`` (empty: True).

    Candidate starts are found with ``list.index`` on the first answer token, so only positions
    where the first token matches are compared in full.
    """
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
    mode: HasAnswerMode = "string",
    *,
    nfd_passage: bool = True,
    on_invalid_regex: InvalidRegexPolicy = "no_match",
) -> bool:
    """Whether one passage has any of ``answers`` (raw answer strings) under ``mode``."""
    _check_mode(mode)
    prepared = _prepare_answers(answers, mode, on_invalid_regex)
    form = _passage_form(title, passage_text, mode, nfd_passage)
    return form is not None and _matches(prepared, form, mode)


def has_answer_matrix(
    answers_per_question: Sequence[Sequence[str]],
    ranked_passage_ids: Sequence[Sequence[Hashable]],
    passages: Mapping[Hashable, tuple[str | None, str | None]],
    mode: HasAnswerMode = "string",
    *,
    nfd_passage: bool = True,
    on_invalid_regex: InvalidRegexPolicy = "no_match",
) -> list[list[bool]]:
    """``result[q][r]``: whether the passage at rank ``r`` for question ``q`` has an answer.

    ``passages`` maps a passage id to ``(title, text)``; it is only indexed (``passages[pid]``)
    once per distinct id, so a lazy store works. A missing id raises :class:`KeyError`.
    """
    _check_mode(mode)
    if len(answers_per_question) != len(ranked_passage_ids):
        raise ValueError(
            f"{len(answers_per_question)} answer lists but {len(ranked_passage_ids)} ranked "
            "passage lists: expected one of each per question"
        )
    prepared = [_prepare_answers(a, mode, on_invalid_regex) for a in answers_per_question]

    string_mode = mode in ("string", "title_string")
    if string_mode:
        # A passage is only substring-searched for a question when it contains one of the
        # question's prefilter keys (a necessary condition, checked as a C-level set test).
        prepared = [(_prefilter_keys(joined), joined) for joined in prepared]

    # Flatten (question, rank) pairs; slot f belongs to the question whose prepared answers
    # are answers_of_slot[f] (a shared reference, 8 bytes a slot).
    answers_of_slot: list = []
    bounds = [0]
    for question, ids in enumerate(ranked_passage_ids):
        answers_of_slot.extend([prepared[question]] * len(ids))
        bounds.append(len(answers_of_slot))
    hit = bytearray(len(answers_of_slot))

    # passage id -> [slot, ...]: each distinct passage is then fetched and tokenised once.
    occurrences: dict[Hashable, list[int]] = {}
    get = occurrences.get
    for slot, pid in enumerate(chain.from_iterable(ranked_passage_ids)):
        occ = get(pid)
        if occ is None:
            occurrences[pid] = [slot]
        else:
            occ.append(slot)

    for pid, occ in occurrences.items():
        try:
            title, text = passages[pid]
        except KeyError:
            raise KeyError(
                f"passage id {pid!r} is ranked for a question but not in passages"
            ) from None
        if string_mode:
            if text is None:
                continue
            tokens = _passage_tokens(title, text, mode, nfd_passage)
            vocabulary = set(tokens)
            contains = f" {' '.join(tokens)} ".__contains__
            for slot in occ:
                keys, joined = answers_of_slot[slot]
                if keys is not None and keys.isdisjoint(vocabulary):
                    continue
                if any(map(contains, joined)):
                    hit[slot] = 1
            continue
        form = _passage_form(title, text, mode, nfd_passage)
        if form is None:
            continue
        if mode == "title":
            startswith = form.startswith
            for slot in occ:
                if startswith(answers_of_slot[slot]):
                    hit[slot] = 1
        else:  # regex
            for slot in occ:
                for pattern in answers_of_slot[slot]:
                    if pattern.search(form) is not None:
                        hit[slot] = 1
                        break
    return [list(map(bool, hit[a:b])) for a, b in pairwise(bounds)]
