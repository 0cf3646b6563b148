"""Configuration of the specialised-encoders study (EntityQuestions Table 4; pydantic only).

One passage index per passage encoder, shared by one question encoder per relation: each
question encoder is fine-tuned from the passage encoder's bi-encoder with the passage side
frozen (``freeze: onlyQ``), so the index stays valid. Training settings not named here come
from ``retriever_training.dpr``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tasks.config_section import Section

#: The passage encoders: the DPR-NQ pair of the train-retriever flow, and one trained on the
#: PAQ-like generated questions (:mod:`tasks.training.paq_like`).
PassageEncoder = Literal["dpr-nq", "dpr-paq"]


class FineTuneConfig(Section):
    """Overrides of ``retriever_training.dpr`` for a run of this stage (None: inherited)."""

    max_steps: int = Field(200, ge=1, description="optimizer steps")
    batch_size: int | None = Field(None, ge=1)
    lr: float | None = Field(None, gt=0.0)
    warmup_steps: int | None = Field(None, ge=0)
    max_train_questions: int | None = Field(
        None, ge=1, description="at most N training questions (None: all): a seeded sample in "
        "the per-relation fine-tunes (as Tables 2-3), the first N for the dpr-paq training")


class PaqLikeConfig(Section):
    """The PAQ-like generated questions and the passage encoder trained on them."""

    n_passages: int = Field(100_000, ge=1, description="sampled passages, one question each")
    seed: int = 0
    exclude_splits: tuple[Literal["train", "dev", "test"], ...] = Field(
        ("test",), description="facts of these EntityQuestions splits generate no question")
    training: FineTuneConfig = FineTuneConfig(max_steps=1000)


class SpecialisedEncodersConfig(Section):
    """Table 4: a shared NQ question encoder vs one specialised question encoder per relation,
    over one passage index per passage encoder (``passage_encoders``).

    ``relations`` empty: every relation of ``entity_questions.relations``; a relation without
    training questions is reported as not run. ``finetune``: the per-relation question-encoder
    fine-tuning (passage encoder frozen).
    """

    enabled: bool = True
    relations: tuple[str, ...] = ()
    passage_encoders: tuple[PassageEncoder, ...] = Field(("dpr-nq", "dpr-paq"), min_length=1)
    paq: PaqLikeConfig = PaqLikeConfig()
    finetune: FineTuneConfig = FineTuneConfig()
