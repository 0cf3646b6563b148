"""Specialised question encoders over one shared passage index (EntityQuestions Table 4).

The evaluation half of Table 4. The question encoders are fine-tuned as every other fine-tune
of the study (``flows._finetune.finetune_pair``: one per relation, ``freeze: onlyQ`` from the
passage encoder's bi-encoder, so the passage side stays bit-identical); here they are searched
over one FAISS index per passage encoder, opened once by :class:`SharedPassageIndex`
(:func:`tasks.retrieval.core.evaluate` scores the runs).

- :func:`plan_relations`: which relations can be specialised (a train file with questions and
  test questions); the others are kept as rows saying why they did not run;
- :func:`check_passage_encoder_identical` (:mod:`tasks.training.finetune`): every tensor of a
  fine-tuned pair's passage encoder equals the start pair's, bit for bit (else the shared
  index would be stale);
- :func:`evaluate_question_encoders`: the shared question encoder on every relation and each
  specialised one on its relation, over the same index -> top-k per relation + macro;
- :func:`index_memory`: bytes of the one index (its FAISS file) vs one index per relation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks.evaluation.has_answer import DEFAULT_MODE, HasAnswerMode
from tasks.io.dpr import iter_dpr_examples
from tasks.retrieval.core import evaluate
from tasks.retrieval.evaluate import passages_by_id
from tasks.retrieval.faiss_index import DenseIndex, Run, index_files
from tasks.retrieval.query_sets import QuerySet
from tasks.training.finetune import (  # noqa: F401  (re-exported: the Table 4 check)
    check_passage_encoder_identical,
    encoder_tensors,
)

SHARED = "shared"
SPECIALISED = "specialised"
READY = "ran"
NO_TRAIN = "no training questions: not run"
NO_TEST = "no test questions: not run"


@dataclass(frozen=True)
class RelationPlan:
    """One relation of the table: its training file, question counts and whether it runs."""

    relation: str
    train_file: Path | None
    train_questions: int
    test_questions: int
    status: str

    @property
    def ready(self) -> bool:
        """Whether a specialised question encoder is trained and evaluated for it."""
        return self.status == READY


def plan_relations(relations: Sequence[str], dpr_dir: Path, test: QuerySet) -> list[RelationPlan]:
    """A plan per relation: ``ran`` when it has DPR training questions
    (``{dpr_dir}/train/{R}.train.json``, non-empty) and test questions, else the reason."""
    from tasks.questions.writers import main_file

    if not relations:
        raise ValueError("no relations to specialise (the relation list is empty)")
    plans = []
    for relation in dict.fromkeys(relations):
        path = Path(dpr_dir) / main_file(relation, "train")
        n_train = sum(1 for _ in iter_dpr_examples(path)) if path.is_file() else 0
        n_test = len(test.groups.get(relation, ()))
        status = NO_TRAIN if n_train == 0 else NO_TEST if n_test == 0 else READY
        plans.append(RelationPlan(relation, path if n_train else None, n_train, n_test, status))
    return plans


class SharedPassageIndex:
    """One passage index, opened once, searched by the bi-encoder that built it (``base``)
    and by question encoders trained from it with the passage encoder frozen.

    A question encoder other than ``base`` must have the same encoder kind, pooling, length
    and normalisation, and a passage encoder bit-identical to ``base``'s
    (:func:`check_passage_encoder_identical`); its vectors then live in the index's space.
    ``searches`` records the encoder of every search (tests and metrics count them).
    """

    def __init__(self, index_dir: Path, base: Any) -> None:
        self.index = DenseIndex.open(Path(index_dir))
        if self.index.manifest["model_fingerprint"] != base.fingerprint:
            raise ValueError(f"{index_dir}: built with {self.index.manifest['model']!r}, not "
                             f"with the passage encoder {base.describe()}")
        self.base = base
        self.searches: list[str] = []
        self._checked: set[str] = set()

    @property
    def path(self) -> Path:
        """The index directory."""
        return self.index.path

    def check_question_encoder(self, spec: Any) -> None:
        """Refuse a question encoder whose vectors do not live in the index's space."""
        if spec.fingerprint == self.base.fingerprint or spec.fingerprint in self._checked:
            return
        for key in ("kind", "pooling", "max_length", "normalize"):
            if getattr(spec, key) != getattr(self.base, key):
                raise ValueError(f"{spec.describe()}: {key} {getattr(spec, key)!r} differs "
                                 f"from the index encoder's {getattr(self.base, key)!r}")
        check_passage_encoder_identical(Path(self.base.ctx_model), Path(spec.ctx_model))
        self._checked.add(spec.fingerprint)

    def search(self, spec: Any, query_set: QuerySet, k: int, batch_size: int = 64,
               device: str = "auto", cpu_threads: int | None = None) -> Run:
        """Top-``k`` passages of every question of ``query_set`` encoded by ``spec`` (with
        ``cpu_threads`` torch CPU threads; None: the machine's count)."""
        from tasks.retrieval.encoders import Embeddings, load_encoder

        self.check_question_encoder(spec)
        vectors = load_encoder(spec, device).encode_questions(
            query_set.texts, batch_size=batch_size, cpu_threads=cpu_threads)
        embeddings = Embeddings(vectors, query_set.qids, spec.name, self.base.fingerprint)
        self.searches.append(spec.name)
        return self.index.search_run(embeddings, k)


def index_memory(index_dir: Path, n_relations: int) -> dict[str, int]:
    """Bytes of the one FAISS index (its ``index`` file, or the prebuilt one it stands for)
    vs one index per relation."""
    size = index_files(Path(index_dir))[0].stat().st_size
    per_relation = size * n_relations
    return {"one_index_bytes": size, "relations": n_relations,
            "one_index_per_relation_bytes": per_relation,
            "saved_bytes": max(per_relation - size, 0)}


def _subset(query_set: QuerySet, relations: Sequence[str]) -> QuerySet:
    return QuerySet(query_set.name, {r: query_set.groups[r] for r in relations},
                    query_set.source)


def _percent(accuracy: Mapping[int, float], ks: Sequence[int]) -> dict[str, float]:
    return {f"top{k}": round(100.0 * accuracy[k], 2) for k in ks}


def _macro(rows: Sequence[Mapping[str, float]], ks: Sequence[int]) -> dict[str, float | None]:
    return {f"top{k}": (round(sum(r[f"top{k}"] for r in rows) / len(rows), 2) if rows
                        else None) for k in ks}


def evaluate_question_encoders(index: SharedPassageIndex, specialised: Mapping[str, Any],
                               test: QuerySet, passages_tsv: Path, ks: Sequence[int],
                               k: int, mode: HasAnswerMode = DEFAULT_MODE,
                               batch_size: int = 64, device: str = "auto",
                               cpu_threads: int | None = None) -> dict[str, Any]:
    """The shared question encoder (``index.base``) on every relation of ``test`` and the
    specialised encoder of each relation in ``specialised`` (``{relation: spec}``) on its
    own relation, all over ``index``; top-k in percent per relation and the macro averages
    (``macro``: over the specialised relations, both encoders; ``shared_macro_all``: the
    shared encoder over every relation of ``test``). Questions are encoded with
    ``cpu_threads`` torch CPU threads (None: the machine's count)."""
    depth = max(max(ks), k)
    runs: dict[tuple[str, str], Run] = {}
    shared_run = index.search(index.base, test, depth, batch_size, device, cpu_threads)
    for relation, spec in specialised.items():
        runs[(SPECIALISED, relation)] = index.search(spec, _subset(test, [relation]), depth,
                                                     batch_size, device, cpu_threads)
    wanted = {pid for run in [shared_run, *runs.values()] for hits in run.values()
              for pid, _ in hits}
    passages = passages_by_id(passages_tsv, wanted)
    shared = {rel: _percent(e.accuracy, ks)
              for rel, e in evaluate(shared_run, test, passages, ks, mode, 0).items()}
    per_relation: dict[str, dict[str, Any]] = {}
    for relation in specialised:
        evaluation = evaluate(runs[(SPECIALISED, relation)], _subset(test, [relation]),
                              passages, ks, mode, 0)[relation]
        tuned = _percent(evaluation.accuracy, ks)
        per_relation[relation] = {
            SHARED: shared[relation], SPECIALISED: tuned,
            "difference": round(tuned[f"top{k}"] - shared[relation][f"top{k}"], 2)}
    return {
        "per_relation": per_relation,
        "shared_all": shared,
        "macro": {SHARED: _macro([r[SHARED] for r in per_relation.values()], ks),
                  SPECIALISED: _macro([r[SPECIALISED] for r in per_relation.values()], ks)},
        "shared_macro_all": _macro(list(shared.values()), ks),
        "searches": list(index.searches),
    }
