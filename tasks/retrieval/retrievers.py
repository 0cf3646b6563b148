"""The retriever registry: every retriever of the study by name, and what it needs.

Three kinds, each a small frozen description (no state, no index yet):

- :class:`BM25Retriever`: Pyserini/Lucene BM25 with ``retrieval.bm25``;
- :class:`DenseRetriever`: a bi-encoder (any encoder spec: a DPR question/context pair, one
  shared encoder, a fine-tuned checkpoint) over its own FAISS index of the collection;
- :class:`HybridRetriever`: reciprocal rank fusion of two other registered retrievers.

:func:`registry_from_config` registers ``bm25``, ``dense`` (``retrieval.dense``), every
``retrieval.dense_retrievers`` entry and every ``retrieval.hybrids`` entry; code can add more
with :meth:`RetrieverRegistry.register` (e.g. a freshly trained DPR pair as ``dpr-nq``). How a
retriever indexes a collection and runs a query set is written once, for all kinds, in
``flows/_retrieve.py``; how a run is scored, in :mod:`tasks.retrieval.core`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tasks.config import BM25Config, DenseConfig, NamedDenseConfig, RetrievalConfig
from tasks.io.errors import MissingInputError
from tasks.retrieval.encoders import EncoderSpec, resolve_encoder_spec


@dataclass(frozen=True)
class BM25Retriever:
    """Lucene BM25 (``k1``, ``b``, ``top_k``, batches of ``batch_size`` questions)."""

    config: BM25Config
    name: str = "bm25"
    title: str = "BM25"

    @property
    def depth(self) -> int:
        """Passages per question in its runs."""
        return self.config.top_k


@dataclass(frozen=True)
class DenseRetriever:
    """A bi-encoder over its own FAISS index (one per encoder and collection)."""

    config: DenseConfig
    name: str = "dense"
    title: str = "dense"

    @property
    def depth(self) -> int:
        """Passages per question in its runs."""
        return self.config.top_k

    @property
    def model_name(self) -> str:
        """Directory-safe name of its encoder, where its shards and index live: the model's
        slug for ``dense``, the retriever's own name for a named one (two trained pairs both
        end in ``question_encoder/``)."""
        return self.config.model_name if self.name == "dense" else self.name

    def encoder(self) -> EncoderSpec:
        """The encoder, resolved to local files with its content fingerprint.

        Not a cached task on purpose: the fingerprint (model files) is what later cache keys
        use.
        """
        cfg = self.config
        return resolve_encoder_spec(cfg.model, cfg.ctx_model, pooling=cfg.pooling,
                                    max_length=cfg.max_length, normalize=cfg.normalize,
                                    name=self.model_name)


@dataclass(frozen=True)
class HybridRetriever:
    """Reciprocal rank fusion (``k``) of the runs of two registered retrievers."""

    name: str
    inputs: tuple[str, str]
    k: int = 60
    depth: int = 100
    title: str = ""


Retriever = BM25Retriever | DenseRetriever | HybridRetriever
#: What a retriever name may be (``dpr-nq``): it names files, directories, artifact keys.
NAME = re.compile(r"[a-z0-9][a-z0-9-]*")
#: Names that would clash with other outputs under ``results/retrieval/``.
RESERVED = frozenset({"buckets", "queries"})


def dense_config(base: DenseConfig, named: NamedDenseConfig) -> DenseConfig:
    """``retrieval.dense`` with the encoder of a named dense retriever."""
    update = {key: value for key, value in named.model_dump().items()
              if key != "title" and value is not None}
    update.setdefault("ctx_model", named.ctx_model)
    update.setdefault("prebuilt_index", named.prebuilt_index)  # passages of another encoder
    return DenseConfig.model_validate({**base.model_dump(), **update})


class RetrieverRegistry:
    """Registered retrievers by name, in registration order (a hybrid after its inputs)."""

    def __init__(self, retrievers: Iterable[Retriever] = ()) -> None:
        self._items: dict[str, Retriever] = {}
        for retriever in retrievers:
            self.register(retriever)

    def register(self, retriever: Retriever) -> Retriever:
        """Add a retriever; its name must be new and a hybrid's inputs registered."""
        if retriever.name in self._items:
            raise ValueError(f"retriever {retriever.name!r} is already registered")
        if not NAME.fullmatch(retriever.name):
            raise ValueError(f"retriever name {retriever.name!r}: lowercase letters, digits and "
                             "dashes only (it names files, directories and Prefect artifacts)")
        if retriever.name in RESERVED:
            raise ValueError(f"{retriever.name!r} names a directory of results/retrieval/; "
                             "choose another retriever name")
        if isinstance(retriever, HybridRetriever):
            missing = [n for n in retriever.inputs if n not in self._items]
            if missing or len(set(retriever.inputs)) != 2:
                raise ValueError(f"hybrid {retriever.name!r} fuses {list(retriever.inputs)}: "
                                 f"needs two distinct registered retrievers (missing {missing})")
        self._items[retriever.name] = retriever
        return retriever

    def hybrid(self, name: str, inputs: tuple[str, str], k: int = 60,
               title: str | None = None) -> HybridRetriever:
        """Register a hybrid over two registered retrievers (depth: the deeper input)."""
        missing = [n for n in inputs if n not in self._items]
        if missing or len(set(inputs)) != 2:
            raise ValueError(f"hybrid {name!r} fuses {list(inputs)}: needs two distinct "
                             f"registered retrievers (missing {missing})")
        a, b = (self[n] for n in inputs)
        return self.register(HybridRetriever(
            name, tuple(inputs), k=k, depth=max(a.depth, b.depth),
            title=title or f"{name}: {a.title} + {b.title}, RRF"))

    def __getitem__(self, name: str) -> Retriever:
        if name not in self._items:
            raise KeyError(f"retriever {name!r} is not registered; registered: "
                           f"{list(self._items)}")
        return self._items[name]

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def needed(self, names: Iterable[str]) -> list[Retriever]:
        """The retrievers ``names`` need, hybrids' inputs included, inputs first."""
        wanted: set[str] = set()

        def add(name: str) -> None:
            retriever = self[name]
            if isinstance(retriever, HybridRetriever):
                for dependency in retriever.inputs:
                    add(dependency)
            wanted.add(name)

        for name in names:
            add(name)
        return [r for n, r in self._items.items() if n in wanted]


#: ``retrieval.dense_retrievers.<name>.model: trained:<run>``: a retriever trained by the
#: train-retriever flow (``Layout.trained_retriever(run)``), resolved when the registry is built.
TRAINED_PREFIX = "trained:"


def trained_encoder_config(named: NamedDenseConfig, trained_dir: Path) -> NamedDenseConfig:
    """A ``trained:`` encoder as the saved directories of
    :func:`models.retriever.export.save_biencoder`: a pair (``question_encoder/`` +
    ``ctx_encoder/``: DPR checkpoints pooling [CLS], or plain encoders with mean pooling) or one
    shared ``encoder/``; the pooling it was trained with (``training_args.json``), DPR's raw
    dot product."""
    from models.retriever.export import CTX_DIR, QUESTION_DIR, SHARED_DIR
    from models.retriever.network import saved_pair_pooling

    trained_dir = Path(trained_dir)
    pooling = saved_pair_pooling(trained_dir)
    if (trained_dir / SHARED_DIR).is_dir():
        return named.model_copy(update={"model": str(trained_dir / SHARED_DIR),
                                        "pooling": pooling, "normalize": False})
    if not (trained_dir / QUESTION_DIR).is_dir():
        raise MissingInputError(
            f"{named.model}: no trained retriever at {trained_dir} (expected {QUESTION_DIR}/ + "
            f"{CTX_DIR}/ or {SHARED_DIR}/); run the train-retriever stage first "
            "(qastress stage train-retriever)")
    return named.model_copy(update={"model": str(trained_dir / QUESTION_DIR),
                                    "ctx_model": str(trained_dir / CTX_DIR),
                                    "pooling": pooling, "normalize": False})


def registry_from_config(cfg: RetrievalConfig,
                         trained_dir: Callable[[str], Path] | None = None) -> RetrieverRegistry:
    """bm25, dense, ``dense_retrievers`` and ``hybrids`` of the retrieval config.

    ``trained_dir(run)``: where the train-retriever flow saved ``run`` (for ``trained:<run>``
    encoders; :meth:`tasks.layout.Layout.trained_retriever`)."""
    registry = RetrieverRegistry([BM25Retriever(cfg.bm25), DenseRetriever(cfg.dense)])
    for name, named in cfg.dense_retrievers.items():
        if named.model.startswith(TRAINED_PREFIX):
            if trained_dir is None:
                raise ValueError(f"retrieval.dense_retrievers.{name}: {named.model!r} needs the "
                                 "project layout (where trained retrievers are saved)")
            named = trained_encoder_config(named, trained_dir(named.model[len(TRAINED_PREFIX):]))
        registry.register(DenseRetriever(dense_config(cfg.dense, named), name=name,
                                         title=named.title or name))
    for name, inputs in cfg.hybrids.items():
        registry.hybrid(name, inputs, k=cfg.rrf_k)
    return registry


def describe_retrievers(registry: RetrieverRegistry, names: Iterable[str]) -> str:
    """Markdown: what each of ``names`` is, then the registered retrievers that were not run
    (a profile may leave one out, e.g. the demo's off-the-shelf encoder), so that a report
    says which it compares and which it does not."""
    names = list(names)

    def what(name: str) -> str:
        retriever = registry[name]
        prebuilt = ""
        if isinstance(retriever, DenseRetriever) and retriever.config.prebuilt_index:
            prebuilt = f", passages from the prebuilt index `{retriever.config.prebuilt_index}`"
        if isinstance(retriever, DenseRetriever) and retriever.title == "dense":
            return f"`{name}` ({retriever.config.model}{prebuilt})"
        if retriever.title != name:
            return f"`{name}` ({retriever.title}{prebuilt})"
        return f"`{name}` ({prebuilt[2:]})" if prebuilt else f"`{name}`"

    lines = ["Retrievers: " + "; ".join(what(name) for name in names) + "."]
    left_out = [name for name in registry if name not in names]
    if left_out:
        lines.append("Registered but not run (not in `retrieval.retrievers`): "
                     + "; ".join(what(name) for name in left_out) + ".")
    return "\n".join(lines) + "\n"


def short_title(retriever: Retriever) -> str:
    """``BM25`` for BM25, else the name (the comparison report's title)."""
    return retriever.title if isinstance(retriever, BM25Retriever) else retriever.name
