"""Options of the retriever training experiments (Sciavolino et al. 2021, Tables 2-3, Figure 2).

Pydantic only (the configuration layer), embedded by ``tasks/config.py`` as
``retriever_experiments``. Every fine-tune starts from the ``baseline`` retriever (a DPR pair
in the retriever registry, by default ``dpr-nq``: ``trained:dpr-nq``) with the settings of
``retriever_training.dpr`` overridden by ``finetune``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from tasks.answer_modes import HasAnswerMode
from tasks.config_section import Section

#: Fine-tuning modes (paper Table 2): both encoders, the question encoder only (passage
#: encoder frozen: the baseline's passage index stays valid), the passage encoder only.
MODES = ("full", "onlyQ", "onlyP")
#: Templates of the training questions (paper Table 2): the relation's own (test) template, or
#: its ``_similar`` paraphrase.
TEMPLATES = ("test", "similar")
#: The relations with a ``_similar`` template (EntityQuestions release).
SIMILAR_RELATIONS = ("P19", "P159", "P170")
Mode = Literal["full", "onlyQ", "onlyP"]
Template = Literal["test", "similar"]


class FinetuneOverrides(Section):
    """What a fine-tune changes of ``retriever_training.dpr`` (None: keep its value)."""

    max_epochs: int | None = Field(10, ge=1, description="DPR fine-tunes 10 epochs")
    max_steps: int | None = Field(None, ge=1, description="optimizer steps (overrides epochs)")
    lr: float | None = Field(None, gt=0.0)
    batch_size: int | None = Field(None, ge=1)
    warmup_steps: int | None = Field(0, ge=0)
    max_train_questions: int | None = Field(None, ge=1,
                                            description="first N questions (None: all)")

    @model_validator(mode="after")
    def _length(self) -> FinetuneOverrides:
        if self.max_steps is None and self.max_epochs is None:
            raise ValueError("set finetune.max_steps or finetune.max_epochs")
        return self


class PatternTableConfig(Section):
    """Table 2 (pattern vs entity): fine-tune on each relation's no-overlap train set rendered
    with the test template and with the ``_similar`` one, in each mode; top-k on the relation's
    no-overlap test set beside BM25 and the baseline."""

    enabled: bool = True
    relations: tuple[str, ...] = SIMILAR_RELATIONS
    templates: tuple[Template, ...] = TEMPLATES
    modes: tuple[Mode, ...] = MODES

    @field_validator("relations")
    @classmethod
    def _similar(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [r for r in value if r not in SIMILAR_RELATIONS]
        if unknown:
            raise ValueError(f"relations {unknown} have no _similar template; Table 2 takes "
                             f"relations of {list(SIMILAR_RELATIONS)}")
        return value


class MultitaskTableConfig(Section):
    """Table 3 (single vs multi-task): fine-tune on one relation's train split alone, and mixed
    with the NQ-style training data (``sources.nq_train``); top-k on every EntityQuestions
    relation (macro) and on the NQ-style dev set (``sources.nq_dev``)."""

    enabled: bool = True
    relations: tuple[str, ...] = ("P19",)
    max_nq_questions: int | None = Field(None, ge=1,
                                         description="NQ-style questions mixed in (None: all)")
    nq_has_answer_mode: HasAnswerMode = Field("dpr-string", description="answer matching of NQ dev "
                                    "(DPR's own); EntityQuestions uses retrieval.has_answer_mode")


class TsneConfig(Section):
    """Figure 2: t-SNE of positive passages of NQ-style vs ``relation`` questions, encoded by
    the baseline's and by the single-relation fine-tuned passage encoder (Table 3's)."""

    enabled: bool = True
    relation: str = "P19"
    split: Literal["train", "dev"] = "dev"
    passages_per_set: int = Field(200, ge=2)
    perplexity: float = Field(30.0, gt=0.0)
    seed: int = 0


class RetrieverExperimentsConfig(Section):
    """The retriever training experiments: Tables 2 and 3 and Figure 2."""

    enabled: bool = True
    baseline: str = Field("dpr-nq", description="registered DPR pair fine-tuned from")
    k: int = Field(20, ge=1, description="top-k of the tables")
    finetune: FinetuneOverrides = FinetuneOverrides()
    pattern: PatternTableConfig = PatternTableConfig()
    multitask: MultitaskTableConfig = MultitaskTableConfig()
    tsne: TsneConfig = TsneConfig()
    n_bootstrap: int = Field(1000, ge=1)
    bootstrap_seed: int = 0
    confidence: float = Field(0.95, gt=0.0, lt=1.0)
    extra_seeds: tuple[int, ...] = Field((), description=(
        "fine-tuning seeds besides retriever_training.dpr.seed: every Table 2-3 fine-tune runs "
        "again with each (same data and settings, from the same baseline), and the rows and "
        "key differences are summarised over all seeds (mean, sd, t-interval, two-level "
        "bootstrap); not in the paper, each seed costs one more set of fine-tunes"))

    @field_validator("extra_seeds")
    @classmethod
    def _distinct_extra_seeds(cls, seeds: tuple[int, ...]) -> tuple[int, ...]:
        repeated = sorted({s for s in seeds if seeds.count(s) > 1})
        if repeated:
            raise ValueError(f"extra_seeds {list(seeds)} repeats seed(s) {repeated}: each "
                             "fine-tuning seed may appear once")
        return seeds
