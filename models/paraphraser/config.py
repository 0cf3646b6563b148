"""Configuration of the paraphraser: the saved architecture (``config.json``) and, re-exported
from the configuration layer (:mod:`tasks.paraphraser_config`), the training options."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tasks.paraphraser_config import ParaphraserConfig

__all__ = ["FORMAT_VERSION", "MODEL_TYPE", "ModelConfig", "ParaphraserConfig"]

#: ``model_type`` written into ``config.json`` of a saved paraphraser.
MODEL_TYPE = "qastress-pointer-generator-transformer"
#: Version of the checkpoint layout; bumped when ``config.json`` changes incompatibly.
FORMAT_VERSION = 1


class ModelConfig(BaseModel):
    """Architecture of a built network: what ``config.json`` of a checkpoint holds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model_type: str = MODEL_TYPE
    format_version: int = FORMAT_VERSION
    spm_vocab_size: int = Field(ge=1)
    vocab_size: int = Field(ge=1, description="SentencePiece pieces + the model's specials")
    d_model: int
    heads: int
    encoder_layers: int
    decoder_layers: int
    ff: int
    dropout: float
    max_len: int
    lowercase: bool
    copy_word_pieces: int | None = Field(None, ge=1)
    pad_id: int
    bos_id: int
    eos_id: int
    sep_id: int
    none_id: int
    unk_id: int
    beam_size: int = 4
    length_penalty: float = 1.0
    block_repeats: bool = False  # False: checkpoints saved before the option existed

    @model_validator(mode="after")
    def _known(self) -> ModelConfig:
        if self.model_type != MODEL_TYPE:
            raise ValueError(f"model_type {self.model_type!r} is not {MODEL_TYPE!r}")
        if self.format_version > FORMAT_VERSION:
            raise ValueError(f"checkpoint format {self.format_version} is newer than this "
                             f"code ({FORMAT_VERSION})")
        return self
