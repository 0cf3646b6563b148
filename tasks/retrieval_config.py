"""Configuration of retrieval and its evaluation: BM25, dense encoders, the retriever registry
(``retrieval`` in params.yaml; re-exported by :mod:`tasks.config`)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from tasks.answer_modes import check_mode
from tasks.config_section import Section
from tasks.model_names import model_slug


class BM25Config(Section):
    """Pyserini BM25 (Lucene) retrieval."""

    k1: float = Field(0.9, ge=0, allow_inf_nan=False, description="term-frequency saturation")
    b: float = Field(0.4, ge=0, le=1, description="document-length normalisation")
    threads: int = Field(2, ge=1)
    top_k: int = Field(100, ge=1)
    java_heap: str = "2g"
    prebuilt_index: str | None = None
    batch_size: int = Field(5_000, ge=1, description="test questions per search task")
    concurrent_batches: int = Field(1, ge=1, description="search tasks submitted at a time")


class DenseConfig(Section):
    """Dense retrieval: a bi-encoder (DPR pair or one shared encoder) over a FAISS index.

    ``model`` is a local Hugging Face directory, a hub name (from the local cache) or
    ``packaged:all-MiniLM-L6-v2`` (the offline default, resolved at run time). A DPR question
    encoder pairs with ``ctx_model`` (derived from a ``...question_encoder...`` name when
    unset); ``pooling`` applies to shared encoders (DPR uses its pooler output). ``bf16`` and
    ``device: auto`` use the GPU only when CUDA is available. Every encoding runs with
    ``cpu_threads`` torch CPU threads (:func:`models.threads.pinned_torch_threads`).
    ``prebuilt_index``: search passages someone else encoded instead of encoding them
    (:mod:`tasks.retrieval.prebuilt_dense`).
    """

    model: str = Field("packaged:all-MiniLM-L6-v2", min_length=1)
    ctx_model: str | None = None
    pooling: Literal["cls", "mean"] = "mean"
    normalize: bool = True
    batch_size: int = Field(64, ge=1)
    max_length: int = Field(256, ge=8, le=512)
    shard_size: int = Field(10_000, ge=1)
    concurrent_shards: int = Field(1, ge=1, description="shard tasks submitted at a time")
    index: Literal["flat", "hnsw", "ivfpq"] = "flat"
    hnsw_m: int = Field(32, ge=2)
    ef_search: int = Field(128, ge=1)
    nlist: int | None = Field(None, ge=1, description="IVF lists (default ~4 sqrt(N))")
    pq_m: int | None = Field(None, ge=1, description="PQ sub-quantizers (default dim // 8)")
    nprobe: int = Field(16, ge=1)
    top_k: int = Field(100, ge=1)
    bf16: bool = False
    device: str = "auto"
    cpu_threads: int | None = Field(
        None, ge=1, description="torch CPU threads of every encoding (passages, questions, "
        "t-SNE); None: the machine's count (OMP_NUM_THREADS or the CPUs of the process), never "
        "the caller's setting, so vectors do not depend on what ran before")
    prebuilt_index: str | None = Field(
        None, min_length=1, description="a dense index of psgs_w100 built elsewhere, searched "
        "with this question encoder instead of encoding the passages: a directory in "
        "Pyserini's layout (index + docid) or a Pyserini prebuilt dense index name, e.g. "
        "wikipedia-dpr-100w.dpr-single-nq (downloaded by Pyserini on first use); other "
        "collections are still encoded")

    @property
    def model_name(self) -> str:
        """Directory-safe model name (``data/indexes/dense/<model_name>/``)."""
        return model_slug(self.model)


class NamedDenseConfig(Section):
    """One more dense retriever under its own name (e.g. a fine-tuned DPR pair): its encoder;
    everything else (batching, shards, index kind, top-k, device) from ``retrieval.dense``.
    Its passages get their own index (``data/indexes/dense/<retriever name>/``). ``model:
    trained:<run>`` is the pair the train-retriever flow saved (``data/models/retriever/<run>``).
    """

    model: str = Field(min_length=1)
    ctx_model: str | None = None
    pooling: Literal["cls", "mean"] | None = None
    normalize: bool | None = None
    prebuilt_index: str | None = Field(
        None, min_length=1, description="its own prebuilt passage index (as "
        "retrieval.dense.prebuilt_index; never inherited from retrieval.dense)")
    title: str | None = Field(None, description="label in tables (default: the name)")


class RetrievalConfig(Section):
    """Retrieval and its evaluation."""

    bm25: BM25Config = BM25Config()
    dense: DenseConfig = DenseConfig()
    retrievers: tuple[str, ...] = Field(
        ("bm25", "dense", "hybrid", "dpr-nq"), min_length=1,
        description="retrievers to evaluate: bm25, dense, a name of dense_retrievers or hybrids")
    # The retriever registry (tasks/retrieval/retrievers.py): more dense encoders by name, and
    # hybrids = reciprocal rank fusion (k = rrf_k) of two registered retrievers.
    dense_retrievers: dict[str, NamedDenseConfig] = Field(default_factory=lambda: {
        "dpr-nq": NamedDenseConfig(model="trained:dpr-nq",
                                   title="DPR-NQ (trained by train-retriever)")})
    hybrids: dict[str, tuple[str, str]] = Field(default_factory=lambda: {"hybrid": ("bm25",
                                                                                    "dense")})
    rrf_k: int = Field(60, ge=0, description="k of reciprocal rank fusion (Cormack et al.)")
    ks: tuple[int, ...] = (1, 5, 20, 100)
    headline_k: int = 20
    result_ctxs: int | None = Field(
        20, ge=1, description="passages per question in the DPR result JSON (None = all); "
        "accuracy always uses the whole run")
    has_answer_mode: str = Field(
        "eq-string", description="answer matching of top-k accuracy: eq-string, "
        "eq-string-title (EntityQuestions' utils/accuracy.py), dpr-string, dpr-string-title "
        "(DPR's qa_validation), title, regex (tasks/evaluation/has_answer.py)")
    # Figure 1: accuracy per subject-frequency bucket (one-off bucket files of the relations).
    bucket_relations: tuple[str, ...] = Field(
        ("P19", "P36", "P106", "P159", "P170", "P800"),
        description="relations whose rand-ent / train-ent bucket files are evaluated "
        "(empty = no bucket evaluation)")
    bucket_sets: tuple[Literal["rand-ent", "train-ent"], ...] = ("rand-ent", "train-ent")
    paraphrased_sets: bool = Field(
        True, description="also retrieve the orig and para questions of the paraphrased SQuAD "
        "test sets (when present) over their contexts and compare top-k accuracy")

    @field_validator("retrievers", "bucket_relations", mode="before")
    @classmethod
    def _a_list_not_a_name(cls, value: object) -> object:
        if isinstance(value, str):
            raise ValueError(f"expected a list of names, e.g. [{value}]; got the single name "
                             f"{value!r}")
        return value

    @field_validator("hybrids", mode="before")
    @classmethod
    def _two_retrievers_per_hybrid(cls, value: object) -> object:
        for name, runs in (value.items() if isinstance(value, dict) else ()):
            if isinstance(runs, str) or not hasattr(runs, "__len__") or len(runs) != 2:
                raise ValueError(f"hybrid {name!r} fuses two retrievers, e.g. [bm25, dense]; "
                                 f"got {runs!r}")
        return value

    @model_validator(mode="after")
    def _check_retriever_names(self) -> RetrievalConfig:
        known = ["bm25", "dense", *self.dense_retrievers, *self.hybrids]
        bad = [n for n in known if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", n)]
        if bad:
            raise ValueError(f"retriever names {bad}: lowercase letters, digits and dashes only")
        clash = {n for n in self.dense_retrievers if n in ("bm25", "dense")} | {
            n for n in self.hybrids if n in ("bm25", "dense", *self.dense_retrievers)}
        if clash:
            raise ValueError(f"retriever names must be unique: {sorted(clash)} registered twice")
        for name, runs in self.hybrids.items():
            unknown = [r for r in runs if r not in known or r == name]
            if unknown:
                raise ValueError(f"hybrids.{name} fuses unknown retrievers {unknown}; known: "
                                 f"{known}")
        unknown = [r for r in self.retrievers if r not in known]
        if unknown:
            raise ValueError(f"retrievers {unknown} are not registered; known: {known} (add "
                             "one under retrieval.dense_retrievers or retrieval.hybrids)")
        return self

    @field_validator("has_answer_mode")
    @classmethod
    def _check_has_answer_mode(cls, value: str) -> str:
        return check_mode(value)

    @field_validator("bucket_relations")
    @classmethod
    def _check_bucket_relations(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        bad = [r for r in value if not re.fullmatch(r"P[0-9]+", r)]
        if bad:
            raise ValueError(f"bucket_relations must be Wikidata property ids (P19), not {bad}")
        return tuple(dict.fromkeys(value))
