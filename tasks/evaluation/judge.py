"""Judge a whole retrieval run: first answer-bearing rank per question and has_answer flags.

:func:`judge_run` is the one entry point for evaluating retrieval (test split, buckets,
paraphrased sets): it returns, per question, the 0-based rank of the first passage that has an
answer (over the whole ranking: the input of :func:`tasks.evaluation.topk.topk_accuracy`) and
the has_answer flags of the first ``result_ctxs`` passages (what the DPR result JSON carries).
Matching semantics per mode: :mod:`tasks.evaluation.has_answer`.

Work done, whatever the number of questions that retrieved a passage:

- The ranks ``< result_ctxs`` of every question are judged; ranks beyond are judged only for
  questions without a hit among them (the reference script also stops at the first hit).
- Work is passage-major: each distinct passage is fetched once, and in the string modes its
  UTF-8 bytes are ASCII-lower-cased once (``text.encode().lower()``, far cheaper than
  ``str.lower`` on non-ASCII text); a passage is only tokenised for a question when those bytes
  contain every ASCII run of the tokens of one of its answers (tokens without ASCII are looked
  up in ``text.lower()``): a necessary condition (:func:`~.has_answer.answer_screen`), so the
  result is exact. A passage is tokenised at most once, for all the questions that need it.
- Runs of at least :data:`PARALLEL_MIN_PAIRS` (question, passage) pairs are split by passage
  over worker processes (``fork``, Linux) when ``passages`` is a plain dict.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain

from tasks.evaluation.has_answer import (
    DEFAULT_MODE,
    STRING_MODES,
    TITLE_TEXT_SEPARATORS,
    HasAnswerMode,
    InvalidRegexPolicy,
    check_mode,
    joined_tokens,
    nfd,
    prepare_answers,
)

#: Runs with fewer (question, passage) pairs to judge are judged in this process.
PARALLEL_MIN_PAIRS = 100_000
#: Most worker processes used when ``workers`` is ``None`` (automatic).
MAX_AUTO_WORKERS = 8
#: Passages holding one of these are tokenised without the screen (index: DPR mode, with NFD).
#: The only code points whose lower case holds ASCII (dotted capital I, Kelvin sign), the one
#: ``str.lower`` maps depending on context (capital sigma) and, under NFD, the only ones that
#: decompose to an ASCII character not followed by a combining mark (Greek question mark,
#: Greek varia, Kelvin sign). ``tests/evaluation`` checks these lists over all of Unicode.
SCREEN_BREAKERS = {False: ("\u0130", "\u212a", "\u03a3"),
                   True: ("\u0130", "\u212a", "\u03a3", "\u037e", "\u1fef")}


def _breaks_screen(text: str) -> bool:
    # SCREEN_BREAKERS[False], as an or-chain of C-level scans (a generator costs more).
    return "\u0130" in text or "\u212a" in text or "\u03a3" in text


def _breaks_decomposed_screen(text: str) -> bool:
    # SCREEN_BREAKERS[True].
    return ("\u0130" in text or "\u212a" in text or "\u03a3" in text or "\u037e" in text
            or "\u1fef" in text)


@dataclass(frozen=True)
class Judgement:
    """One question's judgement.

    ``first_hit``: 0-based rank of the first answer-bearing passage over the whole ranking, or
    ``None``. ``has_answer``: flags of the first ``result_ctxs`` ranked passages (all of them
    when ``result_ctxs`` is ``None``).
    """

    first_hit: int | None
    has_answer: tuple[bool, ...]


def judge_run(
    ranked: Mapping[Hashable, Sequence[Hashable]],
    answers: Mapping[Hashable, Sequence[str]],
    passages: Mapping[Hashable, tuple[str | None, str | None]],
    mode: HasAnswerMode = DEFAULT_MODE,
    result_ctxs: int | None = None,
    *,
    on_invalid_regex: InvalidRegexPolicy = "no_match",
    workers: int | None = None,
) -> dict[Hashable, Judgement]:
    """Judge every question of a run: ``{qid: Judgement}`` in ``ranked``'s order.

    ``ranked``: passage ids per question id, best first. ``answers``: the raw answer strings of
    every question id of ``ranked`` (a missing one is a ``KeyError``). ``passages``: passage id
    -> ``(title, text)``, indexed once per distinct id that needs judging (a lazy store works
    with ``workers=1``). ``result_ctxs``: how many leading flags to return per question
    (``None`` = all). ``workers``: processes (``None`` = automatic, see the module doc).
    """
    qids = list(ranked)
    missing = [qid for qid in qids if qid not in answers]
    if missing:
        raise KeyError(f"{len(missing)} ranked question id(s) have no answers, e.g. "
                       f"{missing[:5]}")
    judged = judge_rows([answers[qid] for qid in qids], [ranked[qid] for qid in qids], passages,
                        mode, result_ctxs, on_invalid_regex=on_invalid_regex, workers=workers)
    return dict(zip(qids, judged, strict=True))


def first_hits(judgements: Mapping[Hashable, Judgement] | Sequence[Judgement]) -> list[int | None]:
    """The ``first_hit`` of each judgement, in order (input of ``topk_accuracy``)."""
    values = judgements.values() if isinstance(judgements, Mapping) else judgements
    return [j.first_hit for j in values]


def judge_rows(
    answers_per_question: Sequence[Sequence[str]],
    ranked_passage_ids: Sequence[Sequence[Hashable]],
    passages: Mapping[Hashable, tuple[str | None, str | None]],
    mode: HasAnswerMode = DEFAULT_MODE,
    result_ctxs: int | None = None,
    *,
    on_invalid_regex: InvalidRegexPolicy = "no_match",
    workers: int | None = None,
) -> list[Judgement]:
    """:func:`judge_run` over parallel lists (question ``i``: answers and ranked ids ``i``)."""
    check_mode(mode)
    if result_ctxs is not None and (isinstance(result_ctxs, bool) or result_ctxs < 0):
        raise ValueError(f"result_ctxs must be None or a non-negative integer, not {result_ctxs!r}")
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be None (automatic) or >= 1, not {workers!r}")
    if len(answers_per_question) != len(ranked_passage_ids):
        raise ValueError(f"{len(answers_per_question)} answer lists but "
                         f"{len(ranked_passage_ids)} ranked lists: expected one of each")
    prepared = [prepare_answers(a, mode, on_invalid_regex) for a in answers_per_question]
    rows = [ids if isinstance(ids, list | tuple) else list(ids) for ids in ranked_passage_ids]
    limits = [len(ids) if result_ctxs is None else min(len(ids), result_ctxs) for ids in rows]

    # Phase 1: the ranks that are written (and that usually hold the first hit).
    flags = _judge_ranges(prepared, rows, [(0, n) for n in limits], passages, mode, workers)
    firsts: list[int | None] = []
    for row_flags in flags:
        at = row_flags.find(1)
        firsts.append(None if at < 0 else at)
    # Phase 2: the rest of the ranking, only for questions without a hit so far.
    pending = [q for q, first in enumerate(firsts) if first is None and len(rows[q]) > limits[q]]
    if pending:
        rest = _judge_ranges([prepared[q] for q in pending], [rows[q] for q in pending],
                             [(limits[q], len(rows[q])) for q in pending], passages, mode,
                             workers)
        for q, row_flags in zip(pending, rest, strict=True):
            at = row_flags.find(1)
            firsts[q] = None if at < 0 else limits[q] + at
    return [Judgement(first, tuple(map(bool, row_flags)))
            for first, row_flags in zip(firsts, flags, strict=True)]


def _judge_ranges(prepared: Sequence, rows: Sequence[Sequence[Hashable]],
                  spans: Sequence[tuple[int, int]], passages: Mapping, mode: str,
                  workers: int | None) -> list[bytearray]:
    """Flags of ``rows[q][start:stop]`` for each question ``q`` (span ``(start, stop)``)."""
    answers_of_slot: list = []
    bounds = [0]
    for answers, (start, stop) in zip(prepared, spans, strict=True):
        answers_of_slot.extend([answers] * (stop - start))
        bounds.append(len(answers_of_slot))
    # passage id -> [slot, ...]: each distinct passage is then handled once.
    occurrences: dict[Hashable, list[int]] = {}
    get = occurrences.get
    slot_pids = chain.from_iterable(
        row[start:stop] for row, (start, stop) in zip(rows, spans, strict=True))
    for slot, pid in enumerate(slot_pids):
        occ = get(pid)
        if occ is None:
            occurrences[pid] = [slot]
        else:
            occ.append(slot)
    hit = bytearray(len(answers_of_slot))
    for slot in _judge_slots(list(occurrences.items()), answers_of_slot, passages, mode,
                             _resolve_workers(workers, len(answers_of_slot), passages)):
        hit[slot] = 1
    return [hit[bounds[q] : bounds[q + 1]] for q in range(len(prepared))]


def _resolve_workers(workers: int | None, n_pairs: int, passages: Mapping) -> int:
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    if workers is not None:
        return workers
    if n_pairs < PARALLEL_MIN_PAIRS or type(passages) is not dict:
        return 1
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(cpus or 1, MAX_AUTO_WORKERS))


# Work of the forked workers (inherited, never pickled): (items, answers_of_slot, passages, mode).
_FORK_STATE: tuple | None = None
_CHUNKS_PER_WORKER = 4


def _judge_chunk(args: tuple[int, int]) -> list[int]:
    index, n_chunks = args
    items, answers_of_slot, passages, mode = _FORK_STATE
    return _judge_slots(items[index::n_chunks], answers_of_slot, passages, mode, 1)


def _judge_slots(items: Sequence[tuple[Hashable, list[int]]], answers_of_slot: Sequence,
                 passages: Mapping, mode: str, workers: int) -> list[int]:
    """The slots (of ``items``: ``(passage id, [slot, ...])``) whose passage has an answer."""
    if workers > 1 and len(items) > 1:
        global _FORK_STATE
        _FORK_STATE = (items, answers_of_slot, passages, mode)
        n_chunks = min(len(items), workers * _CHUNKS_PER_WORKER)
        try:
            with multiprocessing.get_context("fork").Pool(min(workers, n_chunks)) as pool:
                parts = pool.map(_judge_chunk, [(i, n_chunks) for i in range(n_chunks)])
        finally:
            _FORK_STATE = None
        return list(chain.from_iterable(parts))
    if mode in STRING_MODES:
        return _judge_string(items, answers_of_slot, passages, mode)
    return _judge_other(items, answers_of_slot, passages, mode)


def _lookup(passages: Mapping, pid: Hashable) -> tuple[str | None, str | None]:
    try:
        return passages[pid]
    except KeyError:
        raise KeyError(f"passage id {pid!r} is ranked for a question but not in passages") \
            from None


def _judge_string(items, answers_of_slot, passages, mode) -> list[int]:
    # string_source() inlined: this loop runs once per distinct passage of the run.
    separator = TITLE_TEXT_SEPARATORS.get(mode)
    normalise = mode.startswith("dpr-")
    breaks_screen = _breaks_decomposed_screen if normalise else _breaks_screen
    hits: list[int] = []
    for pid, occ in items:
        try:
            title, text = passages[pid]
        except KeyError:
            raise KeyError(f"passage id {pid!r} is ranked for a question but not in passages") \
                from None
        if text is None:
            continue
        if separator is not None:
            text = (title or "") + separator + text
        if text.isascii():
            screen, source = True, text
        else:
            screen = not breaks_screen(text)
            source = None if normalise else text  # the NFD text, made only when needed
        folded = text.encode().lower() if screen else None  # ASCII lower-cased UTF-8
        lowered = padded = None
        for slot in occ:
            screens, joined = answers_of_slot[slot]
            if screens is None:  # an answer without tokens: matches every passage
                hits.append(slot)
                continue
            if screen:
                for runs, others in screens:
                    for run in runs:
                        if run not in folded:
                            break
                    else:
                        if not others:
                            break  # this answer may occur: tokenise
                        if lowered is None:
                            source = source or nfd(text)
                            lowered = source.lower()
                        for token in others:
                            if token not in lowered:
                                break
                        else:
                            break
                else:
                    continue
            if padded is None:
                padded = joined_tokens(source or nfd(text))
            for answer in joined:
                if answer in padded:
                    hits.append(slot)
                    break
    return hits


def _judge_other(items, answers_of_slot, passages, mode) -> list[int]:
    hits: list[int] = []
    for pid, occ in items:
        title, text = _lookup(passages, pid)
        if mode == "title":
            if title is None:
                continue
            startswith = title.lower().strip().startswith
            hits.extend(slot for slot in occ if startswith(answers_of_slot[slot]))
            continue
        if text is None:
            continue
        text = nfd(text)
        for slot in occ:
            for pattern in answers_of_slot[slot]:
                if pattern.search(text) is not None:
                    hits.append(slot)
                    break
    return hits
