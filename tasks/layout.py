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

    @property
    def state(self) -> Path:
        """Prefect's persisted results (the task cache)."""
        return self.params.paths.state

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

    def retrieval_metrics(self, retriever: str) -> Path:
        """Top-k metrics JSON of one retriever (for ``dvc metrics show``)."""
        return self.params.paths.metrics / f"retrieval_{retriever}.json"

    def retrieval_report(self, retriever: str) -> Path:
        """Markdown top-k table of one retriever."""
        return self.params.paths.reports / f"retrieval_{retriever}_topk.md"
