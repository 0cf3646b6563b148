"""Judge a whole retrieval run: first answer-bearing rank per question and has_answer flags.

:func:`judge_run` is the one entry point for evaluating retrieval (test split, buckets,
paraphrased sets): it returns, per question, the 0-based rank of the first passage that has an
answer (over the whole ranking: the input of :func:`tasks.evaluation.topk.topk_accuracy`) and
the has_answer flags of the first ``result_ctxs`` passages (what the DPR result JSON carries).
Matching semantics per mode: :mod:`tasks.evaluation.has_answer`.

Work done, whatever the number of questions that retrieved a passage:

- The ranks ``< result_ctxs`` of every question are judged; ranks beyond are judged only for
  questions without a hit among them, in waves of doubling depth (10, 20, 40, ... ranks) that
  stop at a question's first hit (the reference script stops at the first hit too).
- String modes (:mod:`.string_judge`): question by question, the ranked passages' UTF-8 bytes
  are ASCII-lower-cased at once (far cheaper than ``str.lower`` per passage) and searched for
  each answer's ASCII runs; a passage is only tokenised when it holds every run of one answer
  (a necessary condition, :func:`~.has_answer.answer_screen`, so the result stays exact), and
  at most once per run (its padded token string is kept by passage id).
- Title and regex modes: passage-major, each distinct passage fetched and prepared once.
- Runs of at least :data:`PARALLEL_MIN_PAIRS` (question, passage) pairs are split over worker
  processes (``fork``, Linux; the children inherit the run, only flags come back; string modes
  by blocks of questions, so a passage may be tokenised once per worker) when ``passages`` is a
  plain dict and at least :data:`MIN_AUTO_CPUS` CPUs are usable, or when ``workers`` asks.
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
    HasAnswerMode,
    InvalidRegexPolicy,
    check_mode,
    nfd,
    prepare_answers,
)
from tasks.evaluation.string_judge import lookup, string_flags

#: Runs with fewer (question, passage) pairs to judge are judged in this process.
PARALLEL_MIN_PAIRS = 100_000
#: Ranks judged in the first wave beyond ``result_ctxs`` (each further wave doubles).
FIRST_WAVE = 10
#: Most worker processes used when ``workers`` is ``None`` (automatic).
MAX_AUTO_WORKERS = 8
#: Fewer usable CPUs than this: automatic means one process (on 2 shared cores, 2 workers
#: measured slower than 1 in ``bench/bench_evaluation.py``).
MIN_AUTO_CPUS = 4
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
    -> ``(title, text)``, indexed for the ranks that need judging (a lazy store works
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
    # Phase 2: the rest of the ranking, only for questions without a hit so far, in waves of
    # doubling depth so that a question stops soon after its first hit (as the script does).
    starts = list(limits)
    pending = [q for q, first in enumerate(firsts) if first is None and len(rows[q]) > limits[q]]
    depth = FIRST_WAVE
    while pending:
        spans = [(starts[q], min(len(rows[q]), starts[q] + depth)) for q in pending]
        wave = _judge_ranges([prepared[q] for q in pending], [rows[q] for q in pending], spans,
                             passages, mode, workers)
        still = []
        for q, (start, stop), row_flags in zip(pending, spans, wave, strict=True):
            at = row_flags.find(1)
            if at >= 0:
                firsts[q] = start + at
            elif stop < len(rows[q]):
                starts[q] = stop
                still.append(q)
        pending, depth = still, 2 * depth
    return [Judgement(first, tuple(map(bool, row_flags)))
            for first, row_flags in zip(firsts, flags, strict=True)]


def _judge_ranges(prepared: Sequence, rows: Sequence[Sequence[Hashable]],
                  spans: Sequence[tuple[int, int]], passages: Mapping, mode: str,
                  workers: int | None) -> list[bytearray]:
    """Flags of ``rows[q][start:stop]`` for each question ``q`` (span ``(start, stop)``)."""
    if mode in STRING_MODES:
        n_pairs = sum(stop - start for start, stop in spans)
        n_workers = min(_resolve_workers(workers, n_pairs, passages), len(rows))
        if n_workers <= 1:
            return string_flags(prepared, rows, spans, passages, mode)
        return _fork_map(_string_chunk, (prepared, rows, spans, passages, mode), len(rows),
                         n_workers)
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
    return 1 if (cpus or 1) < MIN_AUTO_CPUS else min(cpus, MAX_AUTO_WORKERS)


# Work of the forked workers (inherited, never pickled), set just before the pool starts.
_FORK_STATE: tuple | None = None
_CHUNKS_PER_WORKER = 4


def _fork_map(function, state: tuple, n_items: int, workers: int) -> list:
    """``function(state, index, n_chunks)`` over ``n_chunks`` interleaved chunks of ``n_items``
    in forked worker processes; the results concatenated in chunk order."""
    global _FORK_STATE
    n_chunks = min(n_items, workers * _CHUNKS_PER_WORKER)
    _FORK_STATE = (function, state)
    try:
        with multiprocessing.get_context("fork").Pool(min(workers, n_chunks)) as pool:
            parts = pool.map(_run_chunk, [(i, n_chunks) for i in range(n_chunks)])
    finally:
        _FORK_STATE = None
    return list(chain.from_iterable(parts))


def _run_chunk(args: tuple[int, int]) -> list:
    function, state = _FORK_STATE
    return function(state, *args)


def _string_chunk(state: tuple, index: int, n_chunks: int) -> list[bytearray]:
    # Contiguous blocks of questions, so that the results concatenate in question order.
    prepared, rows, spans, passages, mode = state
    size = -(-len(rows) // n_chunks)
    block = slice(index * size, (index + 1) * size)
    return string_flags(prepared[block], rows[block], spans[block], passages, mode)


def _slots_chunk(state: tuple, index: int, n_chunks: int) -> list[int]:
    items, answers_of_slot, passages, mode = state
    return _judge_other(items[index::n_chunks], answers_of_slot, passages, mode)


def _judge_slots(items: Sequence[tuple[Hashable, list[int]]], answers_of_slot: Sequence,
                 passages: Mapping, mode: str, workers: int) -> list[int]:
    """The slots (of ``items``: ``(passage id, [slot, ...])``) whose passage has an answer."""
    if workers > 1 and len(items) > 1:
        return _fork_map(_slots_chunk, (items, answers_of_slot, passages, mode), len(items),
                         workers)
    return _judge_other(items, answers_of_slot, passages, mode)


def _judge_other(items, answers_of_slot, passages, mode) -> list[int]:
    hits: list[int] = []
    for pid, occ in items:
        title, text = lookup(passages, pid)
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
