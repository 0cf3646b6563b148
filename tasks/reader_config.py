"""Configuration of the extractive reader: windows, decoding, training and hardware (pydantic).

This module imports only pydantic, so ``tasks/config.py`` can embed :class:`ReaderConfig` in
its ``readers`` section without importing torch or transformers.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tasks.config_section import check_devices

#: The offline default checkpoint (resolved by ``tasks.retrieval.encoders.resolve_model_path``).
DEFAULT_MODEL = "packaged:all-MiniLM-L6-v2"
#: File of a saved reader that holds the window and decoding settings (next to config.json).
READER_CONFIG_FILE = "reader_config.json"


class WindowConfig(BaseModel):
    """How a (question, context) pair becomes windows, and how spans are decoded.

    Saved with every checkpoint (``reader_config.json``), so a loaded reader predicts exactly
    as it did when trained.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_length: int = Field(384, ge=16, le=4096, description="tokens per window "
                            "([CLS] question [SEP] context [SEP])")
    doc_stride: int = Field(128, ge=0, description="tokens of context shared by consecutive "
                            "windows (the `stride` of Hugging Face tokenizers and run_qa.py)")
    max_query_length: int = Field(64, ge=1, description="question tokens kept; a longer "
                                  "question is cut at that token (counted and reported)")
    n_best: int = Field(20, ge=1, description="candidate spans kept per question")
    max_answer_length: int = Field(30, ge=1, description="longest answer in tokens")

    @model_validator(mode="after")
    def _fits(self) -> WindowConfig:
        room = self.max_length - self.max_query_length - 3  # [CLS], [SEP], [SEP]
        if room <= self.doc_stride:
            raise ValueError(
                f"max_length {self.max_length} leaves {room} context tokens after a question of "
                f"max_query_length {self.max_query_length}; it must exceed doc_stride "
                f"{self.doc_stride}")
        return self


class ReaderConfig(WindowConfig):
    """Checkpoint, windows, training and hardware of one extractive reader.

    ``model`` is a local Hugging Face directory, a hub name (from the local cache) or
    ``packaged:all-MiniLM-L6-v2`` (offline default). GPUs are configuration only, as for the
    paraphraser: ``accelerator="auto"`` picks CUDA when present, ``devices > 1`` trains with
    DDP (``strategy="auto"`` resolves to ``"ddp"``) and ``precision="auto"`` is
    ``bf16-mixed`` on a CUDA device with bf16 support, else ``32-true``.
    """

    model: str = Field(DEFAULT_MODEL, min_length=1)
    # training
    batch_size: int = Field(32, ge=1, description="windows per training step (per device)")
    max_steps: int | None = Field(None, ge=1, description="optimizer steps (None: max_epochs)")
    max_epochs: int | None = Field(2, ge=1)
    lr: float = Field(5e-5, gt=0.0)
    weight_decay: float = Field(0.01, ge=0.0)
    warmup_ratio: float = Field(0.1, ge=0.0, lt=1.0, description="share of steps warming up")
    lr_schedule: Literal["linear", "constant", "cosine"] = Field(
        "linear", description="learning rate after warm-up: linear decay (BERT, run_qa.py), "
        "constant, or cosine decay")
    min_lr_ratio: float = Field(0.0, ge=0.0, le=1.0, description="share of lr that the linear "
                                "or cosine decay ends at")
    grad_clip: float | None = Field(1.0, gt=0.0)
    hidden_dropout: float | None = Field(None, ge=0.0, lt=1.0, description="hidden-state "
                                         "dropout while training (None: the checkpoint's own; "
                                         "attention dropout is left as it is)")
    seed: int = 42
    num_workers: int = Field(0, ge=0)
    cpu_threads: int | None = Field(None, ge=1, description="torch intra-op threads while "
                                    "training and predicting (None: the machine's count, "
                                    "never the caller's setting)")
    log_every_n_steps: int = Field(10, ge=1)
    checkpoint_every_n_steps: int = Field(500, ge=1, description="Lightning last.ckpt every N "
                                          "steps into the run's checkpoint directory (a killed "
                                          "run resumes from it)")
    # inference
    predict_batch_size: int = Field(64, ge=1, description="windows per inference batch")
    # hardware (configuration, never code changes)
    accelerator: Literal["auto", "cpu", "gpu", "cuda", "mps"] = "auto"
    devices: int | Literal["auto"] | tuple[int, ...] = 1
    strategy: str = "auto"
    precision: Literal["auto", "32-true", "32", "bf16-mixed", "16-mixed", "bf16-true"] = "auto"
    deterministic: bool = True

    @field_validator("devices")
    @classmethod
    def _devices(cls, value: Any) -> Any:
        return check_devices(value)

    @model_validator(mode="after")
    def _steps(self) -> ReaderConfig:
        if self.max_steps is None and self.max_epochs is None:
            raise ValueError("set max_steps or max_epochs")
        return self

    def window(self) -> WindowConfig:
        """The window and decoding settings (what a checkpoint saves)."""
        return WindowConfig(**{k: getattr(self, k) for k in WindowConfig.model_fields})

    def n_devices(self) -> int | None:
        """Number of requested devices, or None for ``"auto"``."""
        if isinstance(self.devices, tuple):
            return len(self.devices)
        return None if self.devices == "auto" else self.devices
