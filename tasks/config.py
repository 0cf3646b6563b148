"""The one typed configuration of qastress: pydantic models mirroring ``params.yaml``.

``params.yaml`` holds the base values of every section plus ``profiles`` (``smoke``, ``demo``,
``demo-large``, ``real``), each a partial copy of the sections that it overrides; a profile with
``extends: <profile>`` is merged over that profile's overlay instead (``demo-large`` is the demo
with a 5.3x world). :func:`tasks.params_loading.load_params` merges the selected profile over
the base and validates the result; any unknown or ill-typed key is one clear error that names
the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator

from tasks.config_section import Section
from tasks.mlm_config import MlmConfig
from tasks.orchestration_config import (  # noqa: F401  (re-exported: sections of Params)
    DaskConfig,
    OrchestrationConfig,
    RayConfig,
    ServerConfig,
)
from tasks.paraphraser_config import ParaphraserConfig
from tasks.readers_config import ReaderAugmentationConfig, ReadersConfig  # noqa: F401
from tasks.relation_templates import load_templates
from tasks.retrieval_config import (  # noqa: F401  (re-exported: sections of Params)
    BM25Config,
    DenseConfig,
    NamedDenseConfig,
    RetrievalConfig,
)
from tasks.retrieve_then_read_config import RetrieveThenReadConfig
from tasks.retriever_config import RetrieverTrainConfig
from tasks.retriever_experiments_config import RetrieverExperimentsConfig
from tasks.specialised_config import SpecialisedEncodersConfig

PROFILES = ("smoke", "demo", "demo-large", "real")

#: The 24 relations of Sciavolino et al. (2021), Table 1 (P30 is optional and off by default).
EQ_RELATIONS: tuple[str, ...] = (
    "P17", "P19", "P20", "P26", "P36", "P40", "P50", "P69", "P106", "P112", "P127", "P131",
    "P136", "P159", "P170", "P175", "P176", "P264", "P276", "P407", "P413", "P495", "P740",
    "P800",
)


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
    n_people: int = Field(3000, ge=1)
    n_organisations: int = Field(1400, ge=1)
    n_works: int = Field(2700, ge=1)
    n_places: int = Field(1400, ge=1)
    zipf_exponent: float = Field(1.0, gt=0.0)
    max_hyperlinks: int = Field(50_000, ge=1)
    passage_words: int = Field(100, ge=1)
    n_comention_passages: int = Field(500, ge=0)
    n_nq_train: int = Field(800, ge=0)
    n_nq_dev: int = Field(200, ge=0)
    n_nq_test: int = Field(200, ge=0)
    n_squad_train: int = Field(600, ge=0)
    n_squad_dev: int = Field(400, ge=0)
    n_quora_pairs: int = Field(4000, ge=0)
    n_wikianswers_pairs: int = Field(4000, ge=0)
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
    squad_dev_entities: str = Field("squad/dev-v1.1.entities.jsonl", description="gold subject "
                                    "of each dev question (JSONL interchange + id); optional")
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
    facts_per_relation: int = Field(300, ge=1, description="test questions per relation "
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
    no_overlap_dev: int = Field(100, ge=0, description="drawn before train (release: 1000)")
    no_overlap_test: int = Field(300, ge=1, description="seeded sample of the test split; at "
                                 "least facts_per_relation = all of it (release: 1000 = all)")
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
                                                 max_epochs=None, lr=1e-3, copy_word_pieces=2)
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
    world_raters: bool = Field(True, description=(
        "demo world only (sources.world == demo) and only without a ratings file: the world's "
        "truth fills the rating form (tasks/demo/raters.py; first rater strict, second lenient) "
        "and only the pairs both accept enter the paraphrased sets"))
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


class Params(Section):
    """The whole configuration: one section per flow."""

    profile: Literal[PROFILES] = "demo"  # type: ignore[valid-type]  (the tuple above)
    paths: PathsConfig = PathsConfig()
    sources: SourcesConfig = SourcesConfig()
    demo_world: DemoWorldConfig = DemoWorldConfig()
    entity_questions: EntityQuestionsConfig = EntityQuestionsConfig()
    retrieval: RetrievalConfig = RetrievalConfig()
    paraphrase: ParaphraseConfig = ParaphraseConfig()
    retriever_training: RetrieverTrainingConfig = RetrieverTrainingConfig()
    retriever_experiments: RetrieverExperimentsConfig = RetrieverExperimentsConfig()
    readers: ReadersConfig = ReadersConfig()
    retrieve_then_read: RetrieveThenReadConfig = RetrieveThenReadConfig()
    specialised_encoders: SpecialisedEncodersConfig = SpecialisedEncodersConfig()
    orchestration: OrchestrationConfig = OrchestrationConfig()

    @model_validator(mode="after")
    def _finetune_seeds_apart(self) -> Params:
        main = self.retriever_training.dpr.seed
        if main in self.retriever_experiments.extra_seeds:
            raise ValueError(f"retriever_experiments.extra_seeds "
                             f"{list(self.retriever_experiments.extra_seeds)} repeats "
                             f"retriever_training.dpr.seed {main}: its fine-tunes are the "
                             "tables' own")
        return self

    def raw_path(self, source_key: str) -> Path:
        """Absolute-or-relative path of one raw source (``sources.<key>``)."""
        value = getattr(self.sources, source_key)
        path = Path(value)
        return path if path.is_absolute() else self.paths.raw / path
