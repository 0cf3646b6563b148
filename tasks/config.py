"""The one typed configuration of qastress: pydantic models mirroring ``params.yaml``.

``params.yaml`` holds the base values of every section plus ``profiles`` (``smoke``, ``demo``,
``real``), each a partial copy of the sections that it overrides. :func:`load_params` merges the
selected profile over the base and validates the result; any unknown or ill-typed key is one
clear error that names the key.
"""

from __future__ import annotations

import copy
import os
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from tasks import API_STARTUP_TIMEOUT_S
from tasks.answer_modes import check_mode
from tasks.mlm_config import MlmConfig
from tasks.model_names import model_slug
from tasks.paraphraser_config import ParaphraserConfig
from tasks.reader_config import ReaderConfig
from tasks.relation_templates import load_templates
from tasks.retriever_config import RetrieverTrainConfig

PROFILES = ("smoke", "demo", "real")
DEFAULT_PARAMS_FILE = "params.yaml"

#: The 24 relations of Sciavolino et al. (2021), Table 1 (P30 is optional and off by default).
EQ_RELATIONS: tuple[str, ...] = (
    "P17", "P19", "P20", "P26", "P36", "P40", "P50", "P69", "P106", "P112", "P127", "P131",
    "P136", "P159", "P170", "P175", "P176", "P264", "P276", "P407", "P413", "P495", "P740",
    "P800",
)


class Section(BaseModel):
    """Base of every config section: unknown keys are errors, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class PathsConfig(Section):
    """Where data and outputs live, relative to the project root unless absolute."""

    data: Path = Path("data")
    results: Path = Path("results")
    metrics: Path = Path("metrics")
    plots: Path = Path("plots")
    reports: Path = Path("reports")
    state: Path = Field(Path(".qastress"), description="Prefect results and task cache")

    @property
    def raw(self) -> Path:
        """Root of raw inputs in their real formats (``data/raw/<source>/``)."""
        return self.data / "raw"


class DemoWorldConfig(Section):
    """Size and shape of the synthetic encyclopedia (the embedded default world)."""

    seed: int = 13
    n_people: int = 1500
    n_organisations: int = 300
    n_works: int = 800
    n_places: int = 500
    zipf_exponent: float = 1.0
    max_hyperlinks: int = 50_000
    passage_words: int = 100
    n_comention_passages: int = 400
    n_nq_train: int = 800
    n_nq_dev: int = 200
    n_nq_test: int = 200
    n_squad_train: int = 600
    n_squad_dev: int = 200
    n_quora_pairs: int = 600
    n_wikianswers_pairs: int = 600
    trex_docs_per_file: int = Field(1000, ge=1)


class SourcesConfig(Section):
    """Locations of the raw inputs, relative to ``paths.raw`` unless absolute.

    The demo world writes exactly these files; for real data point them at the fetched files.
    """

    world: Literal["demo", "real"] = "demo"
    trex: str = "trex/*.json"
    entity_labels: str = "wikidata/entity_labels.jsonl"
    hyperlink_counts: str = "hyperlinks/entity_counts.tsv"
    passages: str = "wikipedia/psgs_w100.tsv"
    nq_train: str = "nq/nq-train.json"
    nq_dev: str = "nq/nq-dev.json"
    ppdb: str = "ppdb/ppdb-2.0-s-all"
    squad_train: str = "squad/train-v1.1.json"
    squad_dev: str = "squad/dev-v1.1.json"
    quora: str = "quora/quora_duplicate_questions.tsv"
    wikianswers: str = "wikianswers/word_alignments.tsv"


class EntityQuestionsConfig(Section):
    """Building EntityQuestions from triples (Sciavolino et al., 2021, §2-§4).

    Paths (``linker_output``, ``linker_truth``) are relative to ``paths.raw`` unless absolute.
    """

    relations: tuple[str, ...] = EQ_RELATIONS
    # Relation selection (§2): candidates that fail either threshold are dropped and reported.
    min_triples: int = Field(1, ge=0, description="distinct facts needed (paper: 2,000)")
    min_distinct_answers: int = Field(2, ge=0, description="distinct objects needed")
    answer_aliases: bool = Field(True, description="answers = object labels + aliases")
    # Splits (§2): sizes per relation; subjects never repeat across splits.
    facts_per_relation: int = Field(400, ge=1, description="test questions per relation "
                                    "(release: 1000)")
    dev_per_relation: int = Field(100, ge=0, description="release: 1000")
    train_per_relation: int = Field(8000, ge=0)
    disjoint_scope: Literal["global", "relation"] = "global"
    seed: int = 7
    # Frequency buckets (§3, rand-ent / train-ent).
    n_buckets: int = Field(8, ge=1)
    per_bucket: int = Field(1000, ge=1, description="rand-ent facts per bucket")
    bucket_order: Literal["ascending", "descending"] = Field(
        "ascending", description="ascending: bucket0 = rarest; the release numbers descending")
    hyperlink_key: Literal["wikidata", "title"] = "wikidata"
    # Entity linking of the NQ training questions (train-ent).
    linker: Literal["alias", "external"] = "alias"
    linker_output: str | None = Field(None, description="external linker JSONL interchange")
    linker_truth: str | None = Field("nq/nq-train.entities.jsonl",
                                      description="gold links (JSONL interchange)")
    linker_min_chars: int = Field(3, ge=1)
    linker_max_ngram: int = Field(10, ge=1)
    # No-overlap and similar-template sets (§4.1).
    no_overlap_train: int = Field(8000, ge=0)
    no_overlap_dev: int = Field(1000, ge=0)
    no_overlap_test: int = Field(100, ge=1, description="sample of the test split (release: 1000)")
    # DPR retriever-training JSON for the train/dev files.
    dpr_training: bool = True
    dpr_max_positives: int = Field(5, ge=1)
    dpr_hard_negatives: int = Field(30, ge=0, description="BM25 hard negatives; 0 = none")
    dpr_bm25_depth: int = Field(100, ge=1)
    dpr_bm25_index: str | None = Field(
        None, description="index dir or Pyserini prebuilt name; None = build one from passages")
    on_bad_record: Literal["raise", "skip"] = "raise"

    @field_validator("relations")
    @classmethod
    def _known_relations(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        known = load_templates()
        unknown = [r for r in value if r not in known]
        if unknown:
            raise ValueError(
                f"unknown relation(s) {unknown}; expected ids with a question template: "
                f"{sorted(known, key=lambda r: int(r[1:].split('_')[0]))}"
            )
        return value


class BM25Config(Section):
    """Pyserini BM25 (Lucene) retrieval."""

    k1: float = 0.9
    b: float = 0.4
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
    ``device: auto`` use the GPU only when CUDA is available.
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


class ParaphraseSimilarityConfig(Section):
    """Similarity filter of the paraphrases (Gan & Ng, 2019): cosine similarity of sentence
    embeddings of question and paraphrase; a pair is kept when strictly above the threshold."""

    model: str | None = Field(None, description="sentence-transformers directory or name; "
                              "None = the packaged all-MiniLM-L6-v2 (offline)")
    batch_size: int = Field(64, ge=1)
    test_set: float = Field(0.95, ge=-1.0, le=1.0, description="test sets")
    augmentation: float = Field(0.9, ge=-1.0, le=1.0, description="non-adversarial augmentation")
    adversarial_augmentation: float = Field(0.83, ge=-1.0, le=1.0)


class ParaphraseConfig(Section):
    """Paraphrased SQuAD questions (Gan & Ng, 2019): PPDB suggestions, the suggestion-guided
    paraphraser, the similarity filter, the test sets and the human evaluation round trip.

    ``ratings_file`` is relative to ``paths.results`` unless absolute.
    """

    seed: int = 2019
    on_bad_record: Literal["raise", "skip"] = "raise"
    # PPDB suggestions: the lookup table and the n-grams of each question.
    ppdb_pack: Literal["s", "m", "l", "xl", "xxl", "xxxl"] | None = Field(
        None, description="pack size to read instead of the one named in sources.ppdb")
    ppdb_min_score: float = Field(0.25, description="keep rules with PPDB2.0Score above this")
    ppdb_batch_size: int = Field(10_000, ge=1, description="rows per insert batch")
    ppdb_max_per_phrase: int | None = Field(None, ge=1)
    max_ngram: int = Field(6, ge=1)
    suggestions_per_question: int | None = Field(5, ge=1)
    # Training triples.
    min_question_tokens: int = Field(7, ge=1, description="WikiAnswers pairs: both questions")
    none_share: float = Field(0.2, ge=0.0, le=1.0, description="suggestions set to <none>")
    max_wikianswers_pairs: int | None = Field(None, ge=1)
    max_quora_pairs: int | None = Field(None, ge=1)
    # Vocabulary and paraphraser.
    vocab_size: int = Field(8000, ge=8)
    vocab_model_type: Literal["unigram", "bpe"] = "unigram"
    generator: Literal["neural", "ppdb_substitution"] = "neural"
    model: ParaphraserConfig = ParaphraserConfig(d_model=128, layers=2, ff=512, max_steps=600,
                                                 max_epochs=None, lr=1e-3)
    beam_size: int | None = Field(None, ge=1, description="None = model.beam_size")
    without_suggestion: bool = Field(True, description="also paraphrase with <none>")
    generation_shard_questions: int = Field(
        500, ge=1, description="questions per generation task (tasks spread over the runner)")
    concurrent_generation_shards: int = Field(1, ge=1,
                                              description="generation tasks submitted at a time")
    generation_threads: int | None = Field(
        1, ge=1, description="torch CPU threads per generation task (None: torch's default); "
        "1 is fastest for the small paraphraser, and keeps parallel shards off each other")
    max_questions: int | None = Field(None, ge=1, description="SQuAD dev questions used")
    # Filter, test set, human evaluation, report.
    similarity: ParaphraseSimilarityConfig = ParaphraseSimilarityConfig()
    test_set_name: str = Field("dev", pattern=r"^[A-Za-z0-9_-]+$")
    test_set_id_base: int | None = Field(None, ge=0, description="None = 100 x pairs")
    raters: tuple[str, ...] = Field(("A", "B"), min_length=2)
    min_rating: int = Field(4, ge=1, le=5)
    ratings_file: str | None = None
    report_examples: int = Field(10, ge=0)
    # Adversarial suggestions (Flair NER + chunker) -> the adversarial set ("adv").
    adversarial: bool = True
    ner_tagger: str | None = Field(None, description="Flair model name or path; None = train "
                                   "the offline demo taggers")
    chunk_tagger: str | None = Field(None, description="Flair model name or path (as above)")
    quick_taggers: bool = Field(True, description="seconds-scale demo tagger training")
    adversarial_ratings_file: str | None = None


class RetrieverTrainingConfig(Section):
    """Training a DPR retriever (Karpukhin et al., 2020) with Lightning.

    ``init_model`` None pre-trains a small BERT by masked-language modelling on the passages
    (``mlm``; offline), else any BERT-family directory or (cached) hub name. ``data``: ``nq``
    trains DPR-NQ on ``sources.nq_train`` (validated on ``sources.nq_dev``); ``entityquestions``
    trains on the entity-questions flow's DPR training JSON of ``relations`` (empty: every
    relation of ``entity_questions.relations``).
    """

    init_model: str | None = Field(None, description="BERT dir / hub name; None = pre-train")
    data: Literal["nq", "entityquestions"] = "nq"
    relations: tuple[str, ...] = ()
    max_train_questions: int | None = Field(None, ge=1, description="first N (None: all)")
    mlm: MlmConfig = MlmConfig()
    dpr: RetrieverTrainConfig = RetrieverTrainConfig()


class ReadersConfig(Section):
    """Extractive readers on original vs paraphrased SQuAD questions (Gan & Ng, 2019, Tables
    1-2): one reader trained on ``sources.squad_train`` (``model``), plus already fine-tuned
    QA checkpoints evaluated as they are (``pretrained``: local dirs or cached hub names).

    ``released_sets`` (relative to the project root unless absolute) is the directory of the
    released ``{dev,adv}_{orig,para}.json``; skipped when absent or None.
    """

    model: ReaderConfig = ReaderConfig()
    pretrained: tuple[str, ...] = ()
    evaluate_dev: bool = Field(True, description="also score sources.squad_dev")
    released_sets: str | None = "../shared/data/paraphrasing-squad"
    n_bootstrap: int = Field(1000, ge=1)
    bootstrap_seed: int = 0
    confidence: float = Field(0.95, gt=0.0, lt=1.0)


class ServerConfig(Section):
    """The local Prefect server of ``qastress server up`` (its database lives under
    ``paths.state/prefect``)."""

    host: str = Field("127.0.0.1", min_length=1, description="bind address (loopback default)")
    port: int = Field(4200, ge=1, le=65535)


class DaskConfig(Section):
    """prefect-dask's ``DaskTaskRunner``: a local cluster, or an existing one by address."""

    address: str | None = Field(None, description="scheduler of an existing cluster "
                                "(tcp://host:8786); None = start a LocalCluster")
    n_workers: int = Field(2, ge=1)
    threads_per_worker: int = Field(1, ge=1)
    processes: bool = Field(True, description="worker processes (False: threads in-process)")
    dashboard_address: str | None = Field(
        "127.0.0.1:8787", description="LocalCluster dashboard (None = no dashboard)")


class RayConfig(Section):
    """prefect-ray's ``RayTaskRunner`` (optional extra ``qastress[ray]``)."""

    address: str | None = Field(None, description="ray://host:10001 of an existing cluster; "
                                "None = a local Ray instance")
    num_cpus: int | None = Field(None, ge=1, description="local instance only")


class OrchestrationConfig(Section):
    """Where flows report and where shard-parallel tasks run.

    ``api_url`` None: a ``qastress server up`` server when one is running, else a temporary
    local API. ``task_runner`` picks the runner of the shard-parallel subflows (passage
    encoding, BM25 batches, paraphrase generation): ``thread`` (in-process), ``dask`` or
    ``ray``. Worker processes report to the same API as the flow: without a server, one
    temporary API is started for the run and shared.
    """

    api_url: str | None = None
    api_startup_timeout_s: float = Field(API_STARTUP_TIMEOUT_S, gt=0)
    api_start_attempts: int = Field(3, ge=1)
    server: ServerConfig = ServerConfig()
    task_runner: Literal["thread", "dask", "ray"] = "thread"
    max_workers: int | None = Field(None, ge=1, description="thread runner threads")
    dask: DaskConfig = DaskConfig()
    ray: RayConfig = RayConfig()


class Params(Section):
    """The whole configuration: one section per flow."""

    profile: Literal["smoke", "demo", "real"] = "demo"
    paths: PathsConfig = PathsConfig()
    sources: SourcesConfig = SourcesConfig()
    demo_world: DemoWorldConfig = DemoWorldConfig()
    entity_questions: EntityQuestionsConfig = EntityQuestionsConfig()
    retrieval: RetrievalConfig = RetrievalConfig()
    paraphrase: ParaphraseConfig = ParaphraseConfig()
    retriever_training: RetrieverTrainingConfig = RetrieverTrainingConfig()
    readers: ReadersConfig = ReadersConfig()
    orchestration: OrchestrationConfig = OrchestrationConfig()

    def raw_path(self, source_key: str) -> Path:
        """Absolute-or-relative path of one raw source (``sources.<key>``)."""
        value = getattr(self.sources, source_key)
        path = Path(value)
        return path if path.is_absolute() else self.paths.raw / path


class ParamsError(ValueError):
    """``params.yaml`` (or an override) is invalid; the message names the key."""


def _deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _set_dotted(tree: dict[str, Any], dotted: str, value: Any) -> None:
    node = tree
    *parents, leaf = dotted.split(".")
    for part in parents:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise ParamsError(f"override {dotted!r}: {part!r} is not a section")
    node[leaf] = value


def resolve_params(raw: dict[str, Any], profile: str | None = None,
                   overrides: dict[str, Any] | None = None, source: str = "params") -> Params:
    """Merge ``raw['profiles'][profile]`` and dotted ``overrides`` over the base; validate."""
    raw = dict(raw or {})
    profiles = raw.pop("profiles", {}) or {}
    chosen = profile or raw.get("profile") or "demo"
    if chosen not in PROFILES:
        raise ParamsError(f"{source}: profile must be one of {PROFILES}, not {chosen!r}")
    merged = _deep_merge(raw, profiles.get(chosen) or {})
    merged["profile"] = chosen
    for dotted, value in (overrides or {}).items():
        _set_dotted(merged, dotted, value)
    try:
        return Params.model_validate(merged)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise ParamsError(f"{source} (profile {chosen!r}): {problems}") from None


def load_params(path: str | Path | None = None, profile: str | None = None,
                overrides: dict[str, Any] | None = None) -> Params:
    """Read ``params.yaml`` (or ``$QASTRESS_PARAMS``), apply the profile, validate.

    ``profile`` defaults to ``$QASTRESS_PROFILE``, then the file's ``profile`` key, then demo.
    A missing file gives the built-in defaults (the demo profile).
    """
    path = Path(path or os.environ.get("QASTRESS_PARAMS", DEFAULT_PARAMS_FILE))
    profile = profile or os.environ.get("QASTRESS_PROFILE") or None
    raw: dict[str, Any] = {}
    if path.exists():
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise ParamsError(f"{path}: not valid YAML ({exc})") from None
        if not isinstance(raw, dict):
            raise ParamsError(f"{path}: expected a mapping of sections at the top level")
    return resolve_params(raw, profile=profile, overrides=overrides, source=str(path))
