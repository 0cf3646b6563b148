"""Training options of the DPR bi-encoder (pydantic only, so ``tasks/config.py`` can embed it).

Defaults are DPR's (Karpukhin et al., 2020, ``biencoder_train_cfg`` for NQ): learning rate
2e-5 with linear warm-up and linear decay, Adam epsilon 1e-8, no weight decay, gradient-norm
clip 2.0, sequence length 256, one BM25 hard negative per question, in-batch negatives.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tasks.config_section import check_devices

#: Lightning strategies the bi-encoder trains with (single process, or DDP over GPUs/nodes).
STRATEGIES = ("auto", "ddp", "ddp_spawn", "ddp_find_unused_parameters_true", "single_device")
Freeze = Literal["full", "onlyQ", "onlyP"]


class RetrieverTrainConfig(BaseModel):
    """Encoders, loss, optimisation and hardware of one bi-encoder training run.

    ``shared``: one encoder for questions and passages (saved as one ``encoder/`` directory,
    ``cls`` or ``mean`` pooling); otherwise two encoders initialised from the same checkpoint
    and saved as a pair (``question_encoder/``, ``ctx_encoder/``): with ``cls`` pooling as DPR
    checkpoints (``DPRQuestionEncoder`` / ``DPRContextEncoder``, what ``facebook/dpr-*`` are),
    with ``mean`` pooling as two plain ``AutoModel`` checkpoints (DPR's format cannot express
    mean pooling; the pooling is recorded in ``training_args.json``).
    ``freeze``: ``full`` trains both, ``onlyQ`` trains the question encoder only (passage
    encoder frozen, e.g. to keep an existing passage index valid), ``onlyP`` the passage
    encoder only. Hardware is configuration: ``devices > 1`` or ``num_nodes > 1`` trains with
    DDP (``strategy="auto"`` resolves to ``ddp``); passage and question vectors are then
    gathered across processes, so every question is scored against every device's passages.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    # encoders
    shared: bool = Field(False, description="one encoder for both sides (False: a DPR pair)")
    pooling: Literal["cls", "mean"] = "cls"
    freeze: Freeze = "full"
    max_length: int = Field(256, ge=8, le=512, description="question and passage tokens")
    gradient_checkpointing: bool = False
    grad_cache_chunk: int | None = Field(
        None, ge=1, description="gradient cache (Gao et al., 2021): encode at most this many "
        "questions or passages at once, so a step's activation memory is one chunk's whatever "
        "the batch size (one more forward pass); None: off")
    # training data
    hard_negatives: int = Field(1, ge=0, description="BM25 hard negatives per question")
    other_negatives: int = Field(0, ge=0, description="random negatives (negative_ctxs)")
    # optimisation
    batch_size: int = Field(16, ge=1, description="questions per device and step")
    max_epochs: int | None = Field(40, ge=1)
    max_steps: int | None = Field(None, ge=1, description="optimizer steps (overrides epochs)")
    lr: float = Field(2e-5, gt=0.0)
    adam_eps: float = Field(1e-8, gt=0.0)
    weight_decay: float = Field(0.0, ge=0.0)
    warmup_steps: int = Field(1237, ge=0, description="linear warm-up, then linear decay")
    grad_clip: float | None = Field(2.0, gt=0.0, description="max gradient norm")
    seed: int = 12345
    num_workers: int = Field(0, ge=0)
    cpu_threads: int | None = Field(None, ge=1, description="torch CPU threads (None: the "
                                    "machine's count, never the caller's setting)")
    log_every_n_steps: int = Field(10, ge=1)
    checkpoint_every_n_steps: int = Field(200, ge=1, description="Lightning checkpoint (resume)")
    # hardware
    accelerator: Literal["auto", "cpu", "gpu", "cuda"] = "auto"
    devices: int | Literal["auto"] | tuple[int, ...] = 1
    num_nodes: int = Field(1, ge=1)
    strategy: str = "auto"
    precision: Literal["auto", "32-true", "bf16-mixed"] = Field(
        "auto", description="auto: bf16-mixed on a CUDA device with bf16, else 32-true")

    @field_validator("strategy")
    @classmethod
    def _strategy(cls, value: str) -> str:
        if value not in STRATEGIES:
            raise ValueError(f"unknown strategy {value!r}; expected one of {list(STRATEGIES)}")
        return value

    @field_validator("devices")
    @classmethod
    def _devices(cls, value: Any) -> Any:
        return check_devices(value)

    @model_validator(mode="after")
    def _consistent(self) -> RetrieverTrainConfig:
        if self.max_steps is None and self.max_epochs is None:
            raise ValueError("set max_steps or max_epochs")
        if self.shared and self.freeze != "full":
            raise ValueError(f"freeze {self.freeze!r} needs two encoders (shared: false)")
        return self

    def n_devices(self) -> int | None:
        """Number of requested devices per node, or None for ``"auto"``."""
        if isinstance(self.devices, tuple):
            return len(self.devices)
        return None if self.devices == "auto" else self.devices
