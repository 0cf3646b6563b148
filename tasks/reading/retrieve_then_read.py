"""Retrieve-then-read on EntityQuestions: the readers' reader on the retrievers' top-k passages.

Steps (plain functions; the cached tasks are in :mod:`tasks.reading.stages`):

1. :func:`load_questions`: the retrieval stage's DPR result JSON of every retriever
   (``<relation>.<retriever>.json``) -> the same deterministic sample of test questions per
   relation for every retriever (:func:`tasks.reading.open_domain.sample_positions`), checked to
   be the same questions in every retriever's file, and each retriever's ranked passages.
2. :func:`read_top_passages`: the reader decodes its best span in every distinct (question,
   passage) pair of the top ``max(ks)`` passages of any retriever, once (the retrievers share
   many passages; top-1 is a prefix of top-5).
3. :func:`write_predictions_per_k`: per retriever and k, the best span over the first k
   passages (:func:`tasks.reading.open_domain.best_span`) -> ``<retriever>/top<k>.json``
   (``{id: answer}``, the SQuAD predictions format) and ``questions.json`` (id, relation,
   question, answers: the gold side), so any outside reader's predictions score the same way;
   with ``fusion`` and k > 1 also the answer by the fused span + retriever score
   (:mod:`tasks.reading.score_fusion`, weight fitted leave-one-relation-out) ->
   ``<retriever>/top<k>_fused.json`` and the fitted weights in ``<retriever>/fusion.json``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks.evaluation.has_answer import DEFAULT_MODE, HasAnswerMode, passage_has_answer
from tasks.io._jsonstream import iter_json_array
from tasks.io.atomic import write_json
from tasks.io.dpr_results import RetrievedCtx, parse_retrieval_result
from tasks.io.errors import DataFormatError
from tasks.io.squad_predictions import write_predictions
from tasks.reading.open_domain import PassageSpan, best_span, question_id, sample_positions
from tasks.reading.score_fusion import (
    Candidate,
    FitQuestion,
    cross_fitted_weights,
    fused_choice,
    score_scales,
    weight_grid,
)

QUESTIONS_FILE = "questions.json"
PASSAGES_FILE = "passages.json"
FUSION_FILE = "fusion.json"
FUSED = "_fused"


@dataclass(frozen=True, slots=True)
class OpenQuestion:
    """A sampled test question: its id, relation, text and gold answers."""

    id: str
    relation: str
    question: str
    answers: tuple[str, ...]


@dataclass
class OpenSample:
    """The sampled questions and, per retriever, each question's ranked passages."""

    questions: list[OpenQuestion]
    ctxs: dict[str, dict[str, tuple[RetrievedCtx, ...]]]
    files: dict[str, dict[str, Path]]


def predictions_file(out_dir: Path, retriever: str, k: int, fused: bool = False) -> Path:
    """``<out_dir>/<retriever>/top<k>.json`` (``top<k>_fused.json``: the fused score's choice):
    the ``{id: answer}`` of one retriever and k."""
    return Path(out_dir) / retriever / f"top{k}{FUSED if fused else ''}.json"


def result_files(results_dir: Path, retriever: str) -> dict[str, Path]:
    """``{relation: <relation>.<retriever>.json}`` of one retriever's results directory."""
    suffix = f".{retriever}.json"
    return {path.name[: -len(suffix)]: path
            for path in sorted(Path(results_dir).glob(f"*{suffix}"))}


def _sampled(path: Path, relation: str, per_relation: int, seed: int
             ) -> tuple[int, dict[int, Any]]:
    """``(questions in the file, {position: validated result})`` of one file's sample (only the
    sampled records are validated and kept)."""
    values = [value for _, value in iter_json_array(path, "a JSON array of retrieval results")]
    positions = sample_positions(relation, len(values), per_relation, seed)
    return len(values), {i: parse_retrieval_result(values[i], path, i) for i in positions}


def load_questions(results_dirs: Mapping[str, Path], per_relation: int, seed: int) -> OpenSample:
    """The sample of every retriever's result files (same relations, same questions).

    A retriever whose directory lacks a relation another has, a file with a different number
    of questions, or a sampled position holding another question than in the first
    retriever's file is a :class:`DataFormatError` naming both files.
    """
    names = list(results_dirs)
    if not names:
        raise ValueError("no retriever results to read")
    files = {name: result_files(results_dirs[name], name) for name in names}
    first = names[0]
    if not files[first]:
        raise FileNotFoundError(f"{results_dirs[first]}: no <relation>.{first}.json result file")
    for name in names[1:]:
        if set(files[name]) != set(files[first]):
            raise DataFormatError(results_dirs[name], "relations",
                                  f"the relations of {results_dirs[first]} "
                                  f"{sorted(files[first])}", f"{sorted(files[name])}")
    questions: list[OpenQuestion] = []
    ctxs: dict[str, dict[str, tuple[RetrievedCtx, ...]]] = {name: {} for name in names}
    for relation, path in files[first].items():
        size, reference = _sampled(path, relation, per_relation, seed)
        for i, result in reference.items():
            qid = question_id(relation, i)
            questions.append(OpenQuestion(qid, relation, result.question, result.answers))
            ctxs[first][qid] = result.ctxs
        for name in names[1:]:
            other = files[name][relation]
            other_size, results = _sampled(other, relation, per_relation, seed)
            if other_size != size:
                raise DataFormatError(other, "top level", f"{size} questions as in {path}",
                                      f"{other_size}")
            for i, result in results.items():
                if result.question != reference[i].question:
                    raise DataFormatError(other, f"record {i}", f"the question of {path} "
                                          f"record {i}: {reference[i].question!r}",
                                          repr(result.question))
                ctxs[name][question_id(relation, i)] = result.ctxs
    return OpenSample(questions, ctxs, files)


def passage_pairs(sample: OpenSample, k: int) -> dict[tuple[str, str], str]:
    """Distinct ``(question id, passage id) -> passage text`` of every retriever's top ``k``
    (the retrievers search one collection: a passage id is one text; passages with an empty
    text are left out, no span can come from them)."""
    pairs: dict[tuple[str, str], str] = {}
    for by_question in sample.ctxs.values():
        for qid, ranked in by_question.items():
            for ctx in ranked[:k]:
                if ctx.text.strip():
                    pairs.setdefault((qid, ctx.id), ctx.text)
    return pairs


def read_top_passages(reader: Any, sample: OpenSample, k: int, batch_size: int = 64
                      ) -> dict[tuple[str, str], PassageSpan]:
    """The reader's best span in each distinct (question, passage) of the top ``k``."""
    from models.reader.features import QAExample

    text = {q.id: q.question for q in sample.questions}
    pairs = passage_pairs(sample, k)
    keys = list(pairs)
    examples = [QAExample(f"{qid}\t{pid}", text[qid], pairs[(qid, pid)]) for qid, pid in keys]
    predictions = reader.predict(examples, batch_size) if examples else []
    return {key: PassageSpan(p.text, p.score) for key, p in zip(keys, predictions, strict=True)}


def choose_answers(sample: OpenSample, spans: Mapping[tuple[str, str], PassageSpan],
                   retriever: str, k: int) -> tuple[dict[str, str], dict[str, int]]:
    """``({id: answer}, counts)`` of one retriever at k: the best span over the first k
    passages; counts of questions with fewer than k passages, without any span, and of
    passages the reader did not read (empty text)."""
    answers: dict[str, str] = {}
    counts = {"fewer_passages": 0, "no_span": 0, "unread_passages": 0}
    for question in sample.questions:
        ranked = sample.ctxs[retriever][question.id][:k]
        counts["fewer_passages"] += len(ranked) < k
        found = [spans.get((question.id, ctx.id)) for ctx in ranked]
        counts["unread_passages"] += sum(span is None for span in found)
        choice = best_span(found)
        counts["no_span"] += choice.rank is None
        answers[question.id] = choice.text
    return answers, counts


def fusion_candidates(sample: OpenSample, spans: Mapping[tuple[str, str], PassageSpan],
                      retriever: str, k: int) -> dict[str, tuple[Candidate, ...]] | None:
    """``{id: candidates}`` of one retriever's first ``k`` passages (a passage the reader did
    not read: no candidate), or ``None`` when a passage has no retriever score to fuse."""
    candidates: dict[str, tuple[Candidate, ...]] = {}
    for question in sample.questions:
        ranked = sample.ctxs[retriever][question.id][:k]
        if any(ctx.score is None for ctx in ranked):
            return None
        candidates[question.id] = tuple(
            Candidate(span.text, span.score, float(ctx.score)) if span is not None else
            Candidate("", float("-inf"), float(ctx.score))
            for ctx, span in ((c, spans.get((question.id, c.id))) for c in ranked))
    return candidates


def choose_fused_answers(sample: OpenSample, spans: Mapping[tuple[str, str], PassageSpan],
                         retriever: str, k: int, grid_points: int = 21
                         ) -> tuple[dict[str, str], dict] | None:
    """``({id: answer}, fit)`` by the fused score over the first ``k`` passages, its weight
    fitted per relation on the other relations' questions; ``fit`` holds the weights, the
    scales and the grid. ``None`` when the retriever's results lack scores."""
    candidates = fusion_candidates(sample, spans, retriever, k)
    if candidates is None:
        return None
    scales = score_scales(list(candidates.values()))
    by_relation: dict[str, list[FitQuestion]] = {}
    for question in sample.questions:
        by_relation.setdefault(question.relation, []).append(
            FitQuestion(candidates[question.id], question.answers))
    grid = weight_grid(grid_points)
    weights = cross_fitted_weights(by_relation, grid, scales)
    answers = {q.id: fused_choice(candidates[q.id], weights[q.relation], scales).text
               for q in sample.questions}
    fit = {"weights": weights, "scales": {"span": scales.span, "retriever": scales.retriever},
           "grid_points": grid_points}
    return answers, fit


def passage_hits(sample: OpenSample, retriever: str, k: int,
                 mode: HasAnswerMode = DEFAULT_MODE) -> dict[str, dict[str, list]]:
    """``{id: {"ids": [...], "has_answer": [...]}}`` of one retriever's first ``k`` passages;
    a passage the results file did not judge (``has_answer`` null) is judged here (``mode``)."""
    hits: dict[str, dict[str, list]] = {}
    for question in sample.questions:
        ranked = sample.ctxs[retriever][question.id][:k]
        hits[question.id] = {
            "ids": [ctx.id for ctx in ranked],
            "has_answer": [ctx.has_answer if ctx.has_answer is not None else
                           passage_has_answer(question.answers, ctx.text, ctx.title, mode)
                           for ctx in ranked]}
    return hits


def write_predictions_per_k(sample: OpenSample, spans: Mapping[tuple[str, str], PassageSpan],
                            ks: Sequence[int], out_dir: Path,
                            mode: HasAnswerMode = DEFAULT_MODE, fusion: bool = False,
                            grid_points: int = 21) -> dict[str, dict[str, dict]]:
    """``<retriever>/top<k>.json`` per retriever and k, ``<retriever>/passages.json`` (the
    passages read and whether they hold an answer) and ``questions.json``; with ``fusion``,
    ``<retriever>/top<k>_fused.json`` for every k > 1 and the fits in ``fusion.json`` (a
    retriever without passage scores gets ``{"skipped": reason}`` there). Returns the counts
    of :func:`choose_answers` per retriever and k."""
    counts: dict[str, dict[str, dict]] = {}
    for retriever in sample.ctxs:
        counts[retriever] = {}
        write_json(Path(out_dir) / retriever / PASSAGES_FILE,
                   passage_hits(sample, retriever, max(ks), mode))
        fits: dict[str, dict] = {}
        for k in ks:
            answers, counts[retriever][f"top{k}"] = choose_answers(sample, spans, retriever, k)
            write_predictions(predictions_file(out_dir, retriever, k), answers)
            fused = predictions_file(out_dir, retriever, k, fused=True)
            fused.unlink(missing_ok=True)  # no stale choice of an earlier run
            if not fusion or k == 1:
                continue
            chosen = choose_fused_answers(sample, spans, retriever, k, grid_points)
            if chosen is None:
                fits[f"top{k}"] = {"skipped": "a retrieved passage has no score"}
                continue
            write_predictions(fused, chosen[0])
            fits[f"top{k}"] = chosen[1]
        fusion_path = Path(out_dir) / retriever / FUSION_FILE
        if fits:
            write_json(fusion_path, fits, indent=1)
        else:
            fusion_path.unlink(missing_ok=True)
    write_json(Path(out_dir) / QUESTIONS_FILE,
               [{"id": q.id, "relation": q.relation, "question": q.question,
                 "answers": list(q.answers)} for q in sample.questions], indent=1)
    return counts


def relation_of(qid: str) -> str:
    """The relation of a :func:`~tasks.reading.open_domain.question_id`."""
    match = re.fullmatch(r"(.+):\d+", qid)
    if match is None:
        raise ValueError(f"not a retrieve-then-read question id: {qid!r}")
    return match.group(1)
