"""Configuration of retrieve-then-read on EntityQuestions (beyond the papers; pydantic only).

The reader trained by the train-reader stage reads the top-k passages that each retriever found
for a deterministic sample of the test questions of every relation; its best span over the passages
is the answer (and, with ``fusion``, also the best by span + retriever score), scored by exact
match against the EntityQuestions answers.
"""

from __future__ import annotations

from pydantic import Field, field_validator

from tasks.config_section import Section


class RetrieveThenReadConfig(Section):
    """Retrieve-then-read EM on EntityQuestions test questions (``flows/retrieve_then_read.py``).

    ``retrievers`` empty = every retriever of ``retrieval.retrievers`` whose result JSON exists
    under ``results/retrieval/<retriever>/``; ``baseline`` is compared with each of the others
    (paired bootstrap over the same questions).
    """

    enabled: bool = True
    retrievers: tuple[str, ...] = Field((), description="() = every retriever with results")
    baseline: str = Field("bm25", min_length=1, description="compared with each other retriever")
    questions_per_relation: int = Field(100, ge=1, description="test questions sampled per "
                                        "relation (fewer when the relation has fewer)")
    ks: tuple[int, ...] = Field((1, 5), min_length=1, description="passages the reader reads")
    fusion: bool = Field(True, description="also choose the answer over k > 1 passages by the "
                         "span score fused with the retriever's score (tasks/reading/"
                         "score_fusion.py; weight fitted leave-one-relation-out)")
    fusion_grid: int = Field(21, ge=2, description="weights tried from 0 (reader alone) to 1 "
                             "(retriever alone)")
    seed: int = 0
    n_bootstrap: int = Field(1000, ge=1)
    bootstrap_seed: int = 0
    confidence: float = Field(0.95, gt=0.0, lt=1.0)

    @field_validator("ks")
    @classmethod
    def _ks(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if any(k < 1 for k in value) or len(set(value)) != len(value):
            raise ValueError(f"ks must be distinct positive numbers of passages, got {value}")
        return tuple(sorted(value))
