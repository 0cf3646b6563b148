"""DPR retriever-training JSON for the EntityQuestions train/dev files.

For every question of every ``train``/``dev`` file of the layout (main splits, no-overlap,
similar), an example in DPR's format (``{dataset, question, answers, positive_ctxs,
negative_ctxs, hard_negative_ctxs}``):

* positives: passages that contain an answer (DPR's string match: NFD, simple tokenizer,
  uncased) and mention the subject (its normalised tokens occur in title + text). Found by one
  streamed pass over ``psgs_w100.tsv``; passages titled with the subject come first, then file
  order; at most ``max_positives``.
* hard negatives: the top BM25 passages of the question that contain no answer (rank order,
  BM25 score kept), when a BM25 index is given; none otherwise.

Questions without any positive are left out (DPR's trainer cannot use them) and counted. The
subject is parsed back out of the question with its template, so the step reads only the
written files. Output files mirror the dataset layout under ``dpr_dir``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing import current_process
from pathlib import Path

from tasks.evaluation.has_answer import passage_has_answer
from tasks.io.dpr import DprCtx, DprExample, write_dpr_examples
from tasks.io.entityquestions import eq_relation_of, read_eq_file
from tasks.io.errors import SkipCounter
from tasks.io.passages import iter_passages
from tasks.orchestration import TRANSIENT, artifact_task
from tasks.questions.linking import normalise_tokens
from tasks.questions.templates import parse_subject

log = logging.getLogger(__name__)

TRAINING_SPLITS = ("train", "dev")


@dataclass(frozen=True, slots=True)
class TrainingQuestion:
    """A question to turn into a DPR example, with the subject it is about."""

    file: str  # relative to the dataset root
    question: str
    answers: tuple[str, ...]
    subject: str


def training_files(dataset_dir: Path) -> list[Path]:
    """Every train/dev question file of the layout, sorted."""
    return sorted(p for p in Path(dataset_dir).rglob("*.json")
                  if p.name.endswith((".train.json", ".dev.json")))


def _template_key(path: Path) -> str:
    relation = eq_relation_of(path)
    return f"{relation}_similar" if "_similar." in path.name else relation


def load_training_questions(dataset_dir: Path) -> list[TrainingQuestion]:
    """The questions of :func:`training_files` with their subjects parsed back out."""
    out = []
    for path in training_files(dataset_dir):
        key = _template_key(path)
        relative = path.relative_to(dataset_dir).as_posix()
        for item in read_eq_file(path):
            out.append(TrainingQuestion(relative, item.question, item.answers,
                                        parse_subject(key, item.question)))
    return out


def find_positives(passages_tsv: Path, questions: Sequence[TrainingQuestion],
                   max_positives: int, on_bad_record: str = "raise",
                   skips: SkipCounter | None = None) -> list[list[DprCtx]]:
    """Per question, passages mentioning its subject and containing an answer (one pass).

    A malformed passage record raises, or with ``on_bad_record="skip"`` is counted in
    ``skips`` (``entity_questions.on_bad_record``, as the construction's other readers)."""
    by_subject: dict[tuple[str, ...], list[int]] = {}
    for index, question in enumerate(questions):
        key = normalise_tokens(question.subject)
        if key:
            by_subject.setdefault(key, []).append(index)
    first_tokens = {key[0] for key in by_subject}
    longest = max((len(key) for key in by_subject), default=0)
    found: list[list[tuple[int, int, DprCtx]]] = [[] for _ in questions]
    skips = skips if skips is not None else SkipCounter(source=str(passages_tsv))
    for order, passage in enumerate(iter_passages(passages_tsv, on_error=on_bad_record,
                                                  skips=skips)):
        tokens = normalise_tokens(f"{passage.title} {passage.text}")
        mentioned: set[tuple[str, ...]] = set()
        for i, token in enumerate(tokens):
            if token in first_tokens:
                for n in range(1, min(longest, len(tokens) - i) + 1):
                    key = tokens[i:i + n]
                    if key in by_subject:
                        mentioned.add(key)
        for key in mentioned:
            for index in by_subject[key]:
                question = questions[index]
                if passage_has_answer(question.answers, passage.text, mode="dpr-string"):
                    titled = 0 if normalise_tokens(passage.title) == key else 1
                    found[index].append((titled, order, DprCtx(
                        passage.title, passage.text, None, None, passage.id)))
    if skips.total:
        log.warning("%s", skips.summary())
    return [[ctx for *_, ctx in sorted(items, key=lambda x: x[:2])[:max_positives]]
            for items in found]


def bm25_hard_negatives(index: str | Path, passages_tsv: Path,
                        questions: Sequence[TrainingQuestion], n: int, depth: int = 100,
                        threads: int = 2) -> list[list[DprCtx]]:
    """Per question, the top-``n`` BM25 passages (of ``depth``) without an answer.

    Each distinct question text is searched once; each retrieved passage is tokenised once
    (:func:`~tasks.evaluation.has_answer.has_answer_matrix`).
    """
    from tasks.evaluation.has_answer import has_answer_matrix
    from tasks.retrieval.bm25 import bm25_search
    from tasks.retrieval.evaluate import passages_by_id

    if n == 0 or not questions:
        return [[] for _ in questions]
    texts = sorted({q.question for q in questions})
    qid_of = {text: f"q{i}" for i, text in enumerate(texts)}
    run = bm25_search(index, texts, [qid_of[t] for t in texts], k=depth, threads=threads,
                      progress=False)
    passages = passages_by_id(passages_tsv, {pid for hits in run.values() for pid, _ in hits})
    ranked = [run.get(qid_of[q.question], []) for q in questions]
    hits = has_answer_matrix([q.answers for q in questions],
                             [[pid for pid, _ in r] for r in ranked], passages)
    out = []
    for ranking, has in zip(ranked, hits, strict=True):
        negatives = [DprCtx(passages[pid][0], passages[pid][1], score, None, pid)
                     for (pid, score), answer in zip(ranking, has, strict=True) if not answer]
        out.append(negatives[:n])
    return out


def build_examples(questions: Sequence[TrainingQuestion], positives: Sequence[list[DprCtx]],
                   negatives: Sequence[list[DprCtx]]) -> dict[str, list[DprExample]]:
    """DPR examples grouped by file; questions without a positive are left out."""
    out: dict[str, list[DprExample]] = {}
    for question, pos, neg in zip(questions, positives, negatives, strict=True):
        examples = out.setdefault(question.file, [])
        if pos:
            relation_file = Path(question.file).name.removesuffix(".json")
            examples.append(DprExample(f"entityquestions_{relation_file}", question.question,
                                       question.answers, tuple(pos), (), tuple(neg)))
    return out


def _negatives_beside_positives(negatives: Callable[[], list[list[DprCtx]]],
                                positives: Callable[[], list[list[DprCtx]]]
                                ) -> tuple[list[list[DprCtx]], list[list[DprCtx]]]:
    """Both results, the BM25 search overlapped with the positive-passage pass.

    The search runs in the JVM worker process (:func:`tasks.retrieval.jvm.in_jvm_process`), so
    its thread here only waits while this one scans the passages; where the JVM would run in
    this process (a daemonic task-runner worker) the two run one after the other.
    """
    if current_process().daemon:
        return negatives(), positives()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="bm25-negatives") as pool:
        pending = pool.submit(negatives)
        found = positives()
        return pending.result(), found


def dpr_training_step(dataset_dir: Path, passages_tsv: Path, dpr_dir: Path,
                      max_positives: int = 5, hard_negatives: int = 30, bm25_depth: int = 100,
                      bm25_index: str | Path | None = None, threads: int = 2,
                      on_bad_record: str = "raise") -> dict:
    """Write DPR training JSON for every train/dev file of ``dataset_dir`` under ``dpr_dir``.

    A question without a positive passage has no DPR example (DPR's loader drops such
    examples too); the counts say how many. Returns ``{"files": {file: {"questions",
    "examples", "without_positive"}}, "passages_skipped": n}`` (malformed passage records
    skipped with ``on_bad_record="skip"``).
    """
    from tasks.io.atomic import atomic_dir

    questions = load_training_questions(dataset_dir)
    skips = SkipCounter(source=str(passages_tsv))
    if bm25_index is not None and hard_negatives > 0:
        negatives, positives = _negatives_beside_positives(
            lambda: bm25_hard_negatives(bm25_index, passages_tsv, questions, hard_negatives,
                                        bm25_depth, threads),
            lambda: find_positives(passages_tsv, questions, max_positives, on_bad_record,
                                   skips))
    else:
        positives = find_positives(passages_tsv, questions, max_positives, on_bad_record, skips)
        negatives = [[] for _ in questions]
    examples = build_examples(questions, positives, negatives)
    totals: dict[str, int] = {}
    for question in questions:
        totals[question.file] = totals.get(question.file, 0) + 1
    counts = {}
    with atomic_dir(dpr_dir) as tmp:
        for relative, items in sorted(examples.items()):
            write_dpr_examples(tmp / relative, items)
            counts[relative] = {"questions": totals[relative], "examples": len(items),
                                "without_positive": totals[relative] - len(items)}
    return {"files": counts, "passages_skipped": skips.total}


dpr_training_task = artifact_task(dpr_training_step, outputs=("dpr_dir",),
                                  name="write DPR retriever-training JSON",
                                  **TRANSIENT)  # BM25 hard negatives start the JVM
