"""Options of the suggestion-guided paraphraser (``paraphrase.model`` in ``params.yaml``).

Part of the configuration layer: it imports only pydantic, so ``tasks/config.py`` embeds
:class:`ParaphraserConfig` without importing torch or the model package
(``models.paraphraser`` re-exports it).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tasks.config_section import check_devices


class ParaphraserConfig(BaseModel):
    """Architecture, training and generation options of the suggestion-guided paraphraser.

    Unknown keys are errors and values are immutable, like every section of ``tasks/config.py``.
    GPUs are configuration only: ``accelerator="auto"`` picks CUDA when present, ``devices > 1``
    trains with DDP (``strategy="auto"`` resolves to ``"ddp"``), and ``precision="auto"`` is
    ``bf16-mixed`` on a CUDA device that supports bf16, else ``32-true``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    # architecture
    d_model: int = Field(256, ge=8, description="width of embeddings and hidden states")
    heads: int = Field(4, ge=1, description="attention heads (must divide d_model)")
    layers: int = Field(3, ge=1, description="encoder layers")
    decoder_layers: int | None = Field(None, ge=1, description="decoder layers (None: layers)")
    ff: int = Field(1024, ge=1, description="feed-forward width")
    dropout: float = Field(0.1, ge=0.0, lt=1.0)
    max_len: int = Field(64, ge=4, description="max source pieces (input is truncated) and "
                         "default max generated pieces")
    lowercase: bool = Field(True, description="lower-case every text before SentencePiece "
                            "(the vocabulary is trained on lower-cased data)")
    # training
    batch_size: int = Field(32, ge=1)
    max_steps: int | None = Field(None, ge=1, description="optimizer steps (None: max_epochs)")
    max_epochs: int | None = Field(20, ge=1, description="epochs (used when max_steps is None)")
    lr: float = Field(5e-4, gt=0.0)
    weight_decay: float = Field(0.01, ge=0.0)
    betas: tuple[float, float] = (0.9, 0.98)
    warmup_steps: int = Field(200, ge=0)
    schedule: Literal["constant", "inverse_sqrt", "linear"] = "inverse_sqrt"
    label_smoothing: float = Field(0.1, ge=0.0, lt=1.0)
    grad_clip: float | None = Field(1.0, gt=0.0)
    copy_word_pieces: int | None = Field(None, ge=1, description=(
        "a word split into at least this many SentencePiece pieces is copied whole (one copy "
        "unit; the encoder still reads its pieces): rare names are never copied piece by piece "
        "with a piece dropped or repeated; None: only words with unknown characters"))
    copy_oov_rate: float = Field(0.1, ge=0.0, le=1.0, description=(
        "share of distinct source words treated as out-of-vocabulary during training, so the "
        "copy mechanism learns to copy words it cannot spell"))
    val_fraction: float = Field(0.05, ge=0.0, lt=1.0, description=(
        "share of the triples held out for validation loss when no val_triples are given"))
    seed: int = 13
    num_workers: int = Field(0, ge=0)
    cpu_threads: int | None = Field(None, ge=1, description=(
        "torch intra-op threads while training (None: the machine's count, never the "
        "caller's setting); 1 is fastest for small models on a busy CPU"))
    log_every_n_steps: int = Field(50, ge=1)
    checkpoint_every_n_steps: int = Field(1000, ge=1, description=(
        "Lightning last.ckpt every N steps into the run's checkpoint directory (a killed run "
        "resumes from it)"))
    # hardware (configuration, never code changes)
    accelerator: Literal["auto", "cpu", "gpu", "cuda", "mps"] = "auto"
    devices: int | Literal["auto"] | tuple[int, ...] = 1
    strategy: str = "auto"
    precision: Literal["auto", "32-true", "32", "bf16-mixed", "16-mixed", "bf16-true"] = "auto"
    deterministic: bool = True
    # generation defaults
    beam_size: int = Field(4, ge=1)
    length_penalty: float = 1.0
    block_repeats: bool = Field(True, description=(
        "never generate a token right after itself unless the input has it doubled (no "
        "'hölzl hölzl'); saved with the checkpoint"))

    @field_validator("devices")
    @classmethod
    def _devices(cls, value: Any) -> Any:
        return check_devices(value)

    @model_validator(mode="after")
    def _consistent(self) -> ParaphraserConfig:
        if self.d_model % self.heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by heads "
                             f"({self.heads})")
        if (self.d_model // self.heads) % 2:
            raise ValueError(f"d_model / heads ({self.d_model // self.heads}) must be even")
        if self.max_steps is None and self.max_epochs is None:
            raise ValueError("set max_steps or max_epochs")
        return self

    @property
    def n_decoder_layers(self) -> int:
        """Decoder depth (``decoder_layers`` or ``layers``)."""
        return self.decoder_layers or self.layers

    def n_devices(self) -> int | None:
        """Number of requested devices, or None for ``"auto"``."""
        if isinstance(self.devices, tuple):
            return len(self.devices)
        return None if self.devices == "auto" else self.devices
