"""Where every artifact lives on disk, derived from ``params.paths`` in one place.

``dvc.yaml`` names the same paths for the default (demo) profile; keep them in step.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tasks.config import Params


@dataclass(frozen=True)
class Layout:
    """Paths of the pipeline's artifacts for one configuration."""

    params: Params

    @property
    def raw(self) -> Path:
        """Raw inputs in their real formats (``data/raw/<source>/``)."""
        return self.params.paths.raw

    def trex_files(self) -> list[Path]:
        """The T-REx files matched by ``sources.trex``."""
        pattern = Path(self.params.sources.trex)
        if pattern.is_absolute():
            return sorted(Path(pattern.anchor).glob(str(pattern.relative_to(pattern.anchor))))
        return sorted(self.raw.glob(str(pattern)))

    @property
    def eq_root(self) -> Path:
        """EntityQuestions outputs: ``dataset/`` (official layout) and ``questions.parquet``."""
        return self.params.paths.data / "entityquestions"

    @property
    def eq_dataset(self) -> Path:
        """The official EntityQuestions layout (``train/``, ``dev/``, ``test/``, ``one-off/``)."""
        return self.eq_root / "dataset"

    @property
    def questions_table(self) -> Path:
        """Every generated question with relation, split and subject (Parquet)."""
        return self.eq_root / "questions.parquet"

    @property
    def collection_dir(self) -> Path:
        """The passages as a Pyserini JsonCollection."""
        return self.params.paths.data / "indexes" / "collections" / "psgs_w100"

    @property
    def bm25_index(self) -> Path:
        """The Lucene BM25 index of the passages."""
        return self.params.paths.data / "indexes" / "bm25" / "psgs_w100"

    def retrieval_results(self, retriever: str) -> Path:
        """DPR result JSON per relation file and the TREC run of one retriever."""
        return self.params.paths.results / "retrieval" / retriever

    def retrieval_hits(self, retriever: str) -> Path:
        """The first-hit rank of every test question of one retriever (Parquet,
        :mod:`tasks.retrieval.question_hits`), read by the comparison of the retrievers."""
        return self.retrieval_results(retriever) / "test.hits.parquet"

    def retrieval_metrics(self, retriever: str) -> Path:
        """Top-k metrics JSON of one retriever (for ``dvc metrics show``)."""
        return self.params.paths.metrics / f"retrieval_{retriever}.json"

    def retrieval_queries(self, query_set: str) -> Path:
        """A query set as the retrieval tasks read it (``test``, ``buckets``)."""
        return self.params.paths.results / "retrieval" / "queries" / f"{query_set}.json"

    @property
    def retrieval_passages(self) -> Path:
        """Every passage the retrieval runs retrieved (Parquet: id, title, text)."""
        return self.params.paths.results / "retrieval" / "passages.parquet"

    def retrieval_report(self, retriever: str) -> Path:
        """Markdown top-k table of one retriever."""
        return self.params.paths.reports / f"retrieval_{retriever}_topk.md"

    @property
    def eq_work(self) -> Path:
        """EntityQuestions intermediates: facts, relation selection, splits, buckets, links."""
        return self.eq_root / "work"

    @property
    def eq_dpr(self) -> Path:
        """DPR retriever-training JSON of the EntityQuestions train/dev files (same layout)."""
        return self.eq_root / "dpr"

    @property
    def eq_summary(self) -> Path:
        """Markdown summary of the EntityQuestions construction."""
        return self.params.paths.reports / "entityquestions_summary.md"

    @property
    def eq_metrics(self) -> Path:
        """The construction's counts and the linker's scores (for ``dvc metrics show``)."""
        return self.params.paths.metrics / "entity_questions.json"

    def dense_index(self, model_name: str | None = None) -> Path:
        """The FAISS index of the passages for one encoder (default: ``retrieval.dense``)."""
        name = model_name or self.params.retrieval.dense.model_name
        return self.params.paths.data / "indexes" / "dense" / name / "psgs_w100"

    def dense_shards(self, model_name: str | None = None) -> Path:
        """Encoded passage shards (``shard_00000.npy`` + ``.ids.json``) for one encoder."""
        name = model_name or self.params.retrieval.dense.model_name
        return self.params.paths.data / "indexes" / "dense" / name / "shards" / "psgs_w100"

    @property
    def token_cache(self) -> Path:
        """Token ids of passage shards, shared by every encoding with the same tokenizer
        (:mod:`tasks.retrieval.token_cache`; a cache, outside every stage's outputs)."""
        return self.params.paths.data / "cache" / "tokens"

    @property
    def retrieval_comparison(self) -> Path:
        """Pairwise top-k differences with bootstrap CIs between retrievers (metrics JSON)."""
        return self.params.paths.metrics / "retrieval_comparison.json"

    @property
    def retrieval_comparison_report(self) -> Path:
        """Markdown comparison of the retrievers."""
        return self.params.paths.reports / "retrieval_comparison.md"

    @property
    def retrieval_accuracy_plot(self) -> Path:
        """Accuracy vs k per retriever (PNG); the data as CSV next to it (``.csv``)."""
        return self.params.paths.plots / "retrieval_accuracy_vs_k.png"

    # --- paraphrased questions (Gan & Ng, 2019) ---------------------------------------------

    @property
    def paraphrase_root(self) -> Path:
        """Paraphrase intermediates: PPDB table, triples, vocabulary, model, candidates."""
        return self.params.paths.data / "paraphrase"

    @property
    def ppdb_table(self) -> Path:
        """The PPDB rules kept, as a SQLite lookup table."""
        return self.paraphrase_root / "ppdb.sqlite"

    @property
    def paraphrase_triples(self) -> Path:
        """Paraphraser training triples (source, suggestion, target) (Parquet)."""
        return self.paraphrase_root / "training_triples.parquet"

    @property
    def paraphrase_vocab(self) -> Path:
        """The SentencePiece vocabulary directory (``spm.model``)."""
        return self.paraphrase_root / "vocab"

    @property
    def paraphraser_dir(self) -> Path:
        """The trained paraphraser (``load_paraphraser`` reads it)."""
        return self.paraphrase_root / "paraphraser"

    @property
    def paraphraser_checkpoints(self) -> Path:
        """Lightning checkpoints of the paraphraser's training (``last.ckpt``: resume after a
        kill)."""
        return self.params.paths.state / "checkpoints" / "paraphraser"

    @property
    def paraphrase_suggestions(self) -> Path:
        """PPDB suggestions of the SQuAD dev questions (Parquet)."""
        return self.paraphrase_root / "suggestions.parquet"

    @property
    def paraphrase_candidates(self) -> Path:
        """Generated paraphrases before the similarity filter (Parquet)."""
        return self.paraphrase_root / "candidates.parquet"

    @property
    def paraphrase_scored(self) -> Path:
        """Candidates with their similarity and one keep flag per threshold (Parquet)."""
        return self.paraphrase_root / "scored.parquet"

    @property
    def paraphrase_test_sets(self) -> Path:
        """Paraphrased SQuAD test sets in the layout of the release (``dev_orig.json``...)."""
        return self.params.paths.data / "paraphrasing-squad"

    @property
    def paraphrase_unrated_sets(self) -> Path:
        """The chosen pairs before the world raters (demo world; the sets keep accepted ones)."""
        return self.paraphrase_root / "unrated"

    @property
    def paraphrase_human_eval(self) -> Path:
        """Human evaluation: the rating form (CSV) and the imported results (JSON)."""
        return self.params.paths.results / "paraphrase" / "human_eval"

    @property
    def paraphrase_metrics(self) -> Path:
        """Counts at every step of the paraphrase pipeline (for ``dvc metrics show``)."""
        return self.params.paths.metrics / "paraphrase.json"

    @property
    def paraphrase_report(self) -> Path:
        """Markdown report: counts at every filter step and example paraphrases."""
        return self.params.paths.reports / "paraphrase.md"

    @property
    def paraphrase_taggers(self) -> Path:
        """The offline Flair NER and chunk taggers trained on the demo world."""
        return self.paraphrase_root / "taggers"

    @property
    def adversarial_suggestions(self) -> Path:
        """Adversarial suggestions of the SQuAD dev questions (Parquet, as the PPDB ones)."""
        return self.paraphrase_root / "adversarial_suggestions.parquet"

    @property
    def adversarial_candidates(self) -> Path:
        """Paraphrases generated with the adversarial suggestions (Parquet)."""
        return self.paraphrase_root / "adversarial_candidates.parquet"

    @property
    def adversarial_scored(self) -> Path:
        """Adversarial candidates with similarity and keep flags (Parquet)."""
        return self.paraphrase_root / "adversarial_scored.parquet"

    # --- accuracy per subject-frequency bucket (Figure 1) -----------------------------------

    @property
    def retrieval_buckets_results(self) -> Path:
        """TREC runs of the rand-ent / train-ent bucket questions (``<retriever>.trec``)."""
        return self.params.paths.results / "retrieval" / "buckets"

    @property
    def retrieval_buckets_metrics(self) -> Path:
        """Top-k accuracy per set, relation, bucket and retriever (metrics JSON)."""
        return self.params.paths.metrics / "retrieval_buckets.json"

    @property
    def retrieval_buckets_plot(self) -> Path:
        """Figure 1: accuracy per bucket, a panel per relation (PNG; long CSV next to it)."""
        return self.params.paths.plots / "retrieval_buckets.png"

    # --- original vs paraphrased SQuAD questions (retrieval) --------------------------------

    @property
    def paraphrased_index_root(self) -> Path:
        """The collection of the paraphrased sets' contexts (``passages.tsv``), its
        JsonCollection (``collection/``), BM25 index (``bm25/``) and dense shards + index
        (``dense/<model>/``)."""
        return self.params.paths.data / "indexes" / "paraphrased"

    @property
    def paraphrased_collection(self) -> Path:
        """The distinct contexts of the paraphrased sets' orig files (passage TSV)."""
        return self.paraphrased_index_root / "passages.tsv"

    @property
    def retrieval_paraphrased_results(self) -> Path:
        """TREC runs of the orig and para questions (``<retriever>.trec``)."""
        return self.params.paths.results / "retrieval_paraphrased"

    @property
    def retrieval_paraphrased_metrics(self) -> Path:
        """Top-k accuracy of orig vs para questions per set and retriever (metrics JSON)."""
        return self.params.paths.metrics / "retrieval_paraphrased.json"

    @property
    def retrieval_paraphrased_report(self) -> Path:
        """Markdown table: orig vs para top-k accuracy and the difference with its CI."""
        return self.params.paths.reports / "retrieval_paraphrased.md"

    # --- retriever training (DPR with Lightning) ---------------------------------------------

    @property
    def mlm_model(self) -> Path:
        """The small BERT pre-trained by masked-language modelling on the passages."""
        return self.params.paths.data / "models" / "mlm-bert"

    def trained_retriever(self, name: str) -> Path:
        """A trained bi-encoder (``question_encoder/`` + ``ctx_encoder/``, or ``encoder/``)."""
        return self.params.paths.data / "models" / "retriever" / name

    def retriever_checkpoints(self, name: str) -> Path:
        """Lightning checkpoints of a bi-encoder run (``last.ckpt``: resume after a kill)."""
        return self.params.paths.state / "checkpoints" / "retriever" / name

    @property
    def retriever_training_metrics(self) -> Path:
        """Loss curves, steps and time of the pre-training and retriever training."""
        return self.params.paths.metrics / "retriever_training.json"

    # --- retriever training experiments (Tables 2-3, Figure 2) --------------------------------

    @property
    def experiments_root(self) -> Path:
        """Fine-tuned pairs (``models/<name>/``) and their passage indexes (``indexes/``)."""
        return self.params.paths.data / "experiments" / "retriever"

    def experiment_model(self, name: str) -> Path:
        """A fine-tuned DPR pair of the experiments (``question_encoder/`` + ``ctx_encoder/``)."""
        return self.experiments_root / "models" / name

    def experiment_dense(self, name: str) -> tuple[Path, Path]:
        """``(shards_dir, index_dir)`` of a fine-tuned pair's passage index."""
        root = self.experiments_root / "indexes" / name
        return root / "shards", root / "index"

    def experiment_checkpoints(self, name: str) -> Path:
        """Lightning checkpoints of one fine-tune (``last.ckpt``: resume after a kill)."""
        return self.params.paths.state / "checkpoints" / "retriever-experiments" / name

    @property
    def experiment_results(self) -> Path:
        """Query sets, TREC runs and the retrieved passages of the experiments."""
        return self.params.paths.results / "retriever_experiments"

    @property
    def experiment_metrics(self) -> Path:
        """Tables 2-3 and Figure 2's numbers with question counts and bootstrap CIs (JSON)."""
        return self.params.paths.metrics / "retriever_experiments.json"

    @property
    def experiment_report(self) -> Path:
        """Markdown Tables 2 and 3."""
        return self.params.paths.reports / "retriever_experiments.md"

    @property
    def experiment_tsne_plot(self) -> Path:
        """Figure 2: t-SNE of passage embeddings before/after fine-tuning (PNG; CSV next to it)."""
        return self.params.paths.plots / "retriever_tsne.png"

    # --- extractive readers on original vs paraphrased questions (Gan & Ng, Tables 1-2) ---

    def reader_dir(self, name: str) -> Path:
        """A trained reader (Hugging Face checkpoint, ``load_reader`` reads it)."""
        return self.params.paths.data / "readers" / name

    def reader_checkpoints(self, reader_dir: Path) -> Path:
        """Lightning checkpoints of the training of the reader saved at ``reader_dir`` (a
        directory under ``paths.data``): ``last.ckpt``, to resume after a kill."""
        reader_dir = Path(reader_dir)
        root = self.params.paths.state / "checkpoints" / "readers"
        try:
            return root / reader_dir.relative_to(self.params.paths.data)
        except ValueError:
            raise ValueError(f"{reader_dir}: a reader is saved under paths.data "
                             f"({self.params.paths.data})") from None

    def reader_predictions(self, reader: str) -> Path:
        """``{id: answer}`` predictions JSON of one reader (``<set>_<orig|para>.json``)."""
        return self.params.paths.results / "readers" / reader

    @property
    def readers_metrics(self) -> Path:
        """EM/F1 of orig vs para per set and reader, drops with bootstrap CIs (JSON)."""
        return self.params.paths.metrics / "readers.json"

    @property
    def readers_report(self) -> Path:
        """Markdown Tables 1-2: EM/F1 on orig vs paraphrased questions."""
        return self.params.paths.reports / "readers.md"

    # --- specialised question encoders over one passage index (EntityQuestions Table 4) ---

    @property
    def specialised_root(self) -> Path:
        """PAQ-like questions, the PAQ passage encoder, the per-relation question encoders
        (``models/<passage encoder>/<relation>``) and the indexes built by this stage."""
        return self.params.paths.data / "specialised"

    @property
    def specialised_metrics(self) -> Path:
        """Top-k of shared vs specialised question encoders, index memory (JSON)."""
        return self.params.paths.metrics / "specialised_encoders.json"

    @property
    def specialised_report(self) -> Path:
        """Markdown Table 4."""
        return self.params.paths.reports / "specialised_encoders.md"

    # --- re-training readers on augmented questions (Gan & Ng, Tables 3-6) -----------------

    def augmentation_dir(self, kind: str) -> Path:
        """One augmentation kind: suggestions, candidates, scored candidates (Parquet), the
        augmented training file (``train-v1.1.json``) and the re-trained reader (``reader/``)."""
        return self.params.paths.data / "reader_augmentation" / kind

    def augmentation_reader(self, kind: str) -> Path:
        """One kind's reader, re-trained on its augmented training file (HF checkpoint)."""
        return self.augmentation_dir(kind) / "reader"

    def augmentation_counts(self, kind: str) -> Path:
        """What one kind's stage did: the counts of every step and the training file (JSON;
        ``{"configured": false}`` when the kind is not in ``readers.augmentation.kinds``)."""
        return self.augmentation_dir(kind) / "augmentation.json"

    def augmentation_predictions(self, kind: str) -> Path:
        """``{id: answer}`` predictions of one kind's re-trained reader."""
        return self.params.paths.results / "reader_augmentation" / kind

    @property
    def augmentation_before_predictions(self) -> Path:
        """The "before" reader's predictions that the readers stage had not written, and
        ``files.json``: which prediction file was the "before" of each evaluated file."""
        return self.params.paths.results / "reader_augmentation" / "before"

    @property
    def augmentation_seed_readers(self) -> Path:
        """The readers trained with ``readers.augmentation.extra_seeds`` (empty without)."""
        return self.params.paths.data / "reader_augmentation" / "seeds"

    @property
    def augmentation_seed_results(self) -> Path:
        """Their predictions (empty without extra seeds)."""
        return self.params.paths.results / "reader_augmentation" / "seeds"

    def augmentation_seed_reader(self, seed: int, reader: str) -> Path:
        """A reader trained with one of ``readers.augmentation.extra_seeds``: ``before`` (on
        the original questions) or the re-trained reader of an augmentation kind."""
        return self.augmentation_seed_readers / f"seed{seed}" / reader

    def augmentation_seed_predictions(self, seed: int, reader: str) -> Path:
        """``{id: answer}`` predictions of :meth:`augmentation_seed_reader`'s reader."""
        return self.augmentation_seed_results / f"seed{seed}" / reader

    @property
    def augmentation_metrics(self) -> Path:
        """EM/F1 before vs after augmentation with bootstrap CIs, and the counts (JSON)."""
        return self.params.paths.metrics / "reader_augmentation.json"

    @property
    def augmentation_report(self) -> Path:
        """Markdown Tables 3-6: EM/F1 before vs after re-training on augmented questions."""
        return self.params.paths.reports / "reader_augmentation.md"

    @property
    def retrieve_then_read_results(self) -> Path:
        """Retrieve-then-read: ``questions.json``, ``<retriever>/top<k>.json`` (predictions)."""
        return self.params.paths.results / "retrieve_then_read"

    @property
    def retrieve_then_read_metrics(self) -> Path:
        """EM and answer recall per retriever, k and relation, bootstrap CIs (JSON)."""
        return self.params.paths.metrics / "retrieve_then_read.json"

    @property
    def retrieve_then_read_report(self) -> Path:
        """Markdown table of retrieve-then-read EM per retriever."""
        return self.params.paths.reports / "retrieve_then_read.md"

    # --- the study's report -------------------------------------------------------------------

    @property
    def study_timings(self) -> Path:
        """Wall and CPU seconds per stage of the last study run (JSON, not a metric)."""
        return self.params.paths.results / "study_timings.json"

    @property
    def study_timeline(self) -> Path:
        """Gantt chart of the last study run's stages (PNG, from :attr:`study_timings`)."""
        return self.params.paths.results / "study_timeline.png"

    @property
    def report_html(self) -> Path:
        """The study's report: one self-contained HTML file (figures embedded)."""
        return self.params.paths.reports / "report.html"
