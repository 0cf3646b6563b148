"""Pre-train a small ``BertForMaskedLM`` from scratch with Lightning; save it with
``save_pretrained`` (weights, config, tokenizer, ``trainer_state.json``)."""

from __future__ import annotations

import platform
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader

from models.lightning_quiet import quiet_lightning
from models.logged_steps import logs_step, records_step
from models.mlm.config import MlmConfig
from models.optim import adamw, decay_groups, trainer_precision
from models.retriever.module import linear_schedule
from models.threads import pinned_torch_threads
from tasks.io.atomic import atomic_dir, write_json

TRAINER_STATE_FILE = "trainer_state.json"
TRAINING_ARGS_FILE = "training_args.json"


class MlmModule(pl.LightningModule):
    """``BertForMaskedLM`` trained on masked batches (AdamW, linear warm-up and decay)."""

    def __init__(self, model: Any, config: MlmConfig) -> None:
        super().__init__()
        self.model = model
        self.config = config
        self.history: list[dict[str, float]] = []

    def training_step(self, batch: Mapping[str, torch.Tensor], batch_idx: int) -> torch.Tensor:
        loss = masked_lm_loss(self.model, batch)
        step = self.global_step + 1
        if logs_step(self.trainer, step, self.config.log_every_n_steps):
            self.log("train_loss", loss, batch_size=batch["input_ids"].shape[0])
        if records_step(step, self.config.log_every_n_steps):
            self.history.append({"step": step, "loss": float(loss.detach())})
        return loss

    def configure_optimizers(self) -> dict[str, Any]:
        optimizer = adamw(decay_groups(self.model.named_parameters(), self.config.weight_decay),
                          lr=self.config.lr,
                          precision=trainer_precision(self, self.config.precision))
        scheduler = torch.optim.lr_scheduler.LambdaLR(
            optimizer, linear_schedule(self.config.warmup_steps, self.config.max_steps))
        return {"optimizer": optimizer,
                "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}


def masked_lm_loss(model: Any, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
    """``BertForMaskedLM``'s loss, with the vocabulary projection applied to the masked
    positions only (~15 % of the tokens: the same loss, several times less compute)."""
    hidden = model.bert(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                        token_type_ids=batch.get("token_type_ids")).last_hidden_state
    labels = batch["labels"]
    selected = labels != -100
    if not bool(selected.any()):  # nothing masked in this batch: no loss, keep the graph
        return hidden.sum() * 0.0
    logits = model.cls(hidden[selected])
    return torch.nn.functional.cross_entropy(logits.float(), labels[selected])


def build_model(config: MlmConfig, tokenizer: Any) -> Any:
    """A randomly initialised ``BertForMaskedLM`` of the configured size for ``tokenizer``."""
    from transformers import BertConfig, BertForMaskedLM

    bert = BertConfig(vocab_size=len(tokenizer), hidden_size=config.hidden,
                      num_hidden_layers=config.layers, num_attention_heads=config.heads,
                      intermediate_size=config.intermediate,
                      hidden_dropout_prob=config.dropout,
                      attention_probs_dropout_prob=config.dropout,
                      max_position_embeddings=max(512, config.max_length),
                      pad_token_id=tokenizer.pad_token_id or 0)
    return BertForMaskedLM(bert)


class PassageExamples(torch.utils.data.Dataset):
    """``(title, text)`` passages as masked-LM examples, tokenised when the loader draws them.

    ``[CLS] title [SEP] text [SEP]`` token ids and segment ids (the passage input format of the
    retriever), truncated longest-first; the text (or the title) alone where one side is empty.
    A run of ``max_steps`` batches draws a fraction of a large corpus (300 x 16 of the 51,770
    passages of ``demo-large``), so the rest is never tokenised; the examples drawn are those of
    tokenising every passage first. An empty passage is an error here, before training starts.
    """

    def __init__(self, tokenizer: Any, pairs: Sequence[tuple[str, str]], max_length: int
                 ) -> None:
        for index, (title, text) in enumerate(pairs):
            if not (title or text).strip():
                raise ValueError(f"passage {index}: empty title and text")
        self.tokenizer = tokenizer
        self.pairs = pairs
        self.max_length = max_length

    def __len__(self) -> int:
        return len(self.pairs)

    def __getitem__(self, index: int) -> dict[str, list[int]]:
        title, text = self.pairs[index]
        if title and text:
            enc = self.tokenizer(title, text, truncation=True, max_length=self.max_length)
        else:
            enc = self.tokenizer(title or text, truncation=True, max_length=self.max_length)
        return {"input_ids": enc["input_ids"], "token_type_ids": enc["token_type_ids"]}


def pretrain_mlm(pairs: Sequence[tuple[str, str]], config: MlmConfig | Mapping[str, Any] | None,
                 out_dir: str | Path, tokenizer_dir: str | Path) -> dict[str, Any]:
    """Pre-train on ``(title, text)`` passages for ``config.max_steps`` steps; save a
    ``BertForMaskedLM`` checkpoint and the tokenizer of ``tokenizer_dir`` into ``out_dir``.
    Returns the trainer state (steps, seconds, loss history)."""
    from transformers import AutoTokenizer, DataCollatorForLanguageModeling

    if not isinstance(config, MlmConfig):
        config = MlmConfig.model_validate(dict(config or {}))
    if not pairs:
        raise ValueError("no passages to pre-train on (the corpus is empty)")
    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir))
    pl.seed_everything(config.seed, workers=True, verbose=False)
    examples = PassageExamples(tokenizer, pairs, config.max_length)
    collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=config.mask_prob)
    loader = DataLoader(examples, batch_size=config.batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(config.seed),
                        collate_fn=collator)
    module = MlmModule(build_model(config, tokenizer).train(), config)
    cuda = config.accelerator in ("cuda", "gpu") or (
        config.accelerator == "auto" and torch.cuda.is_available())
    precision = config.precision
    if precision == "auto":
        precision = "bf16-mixed" if cuda and torch.cuda.is_bf16_supported() else "32-true"
    started = time.time()
    # (threads pinned: weights must not depend on the caller)
    with pinned_torch_threads(config.cpu_threads), quiet_lightning():
        trainer = pl.Trainer(accelerator=config.accelerator, devices=1, precision=precision,
                             max_steps=config.max_steps, max_epochs=-1, logger=False,
                             enable_checkpointing=False, enable_progress_bar=False,
                             enable_model_summary=False, gradient_clip_val=1.0,
                             log_every_n_steps=config.log_every_n_steps)
        trainer.fit(module, train_dataloaders=loader)
    state = {"global_step": trainer.global_step, "passages": len(examples),
             "train_seconds": round(time.time() - started, 3),
             "final_train_loss": float(trainer.callback_metrics["train_loss"]),
             "log_history": module.history}
    model = module.model.to("cpu").float().eval()
    with atomic_dir(out_dir) as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        write_json(tmp / TRAINING_ARGS_FILE,
                   {**config.model_dump(mode="json"), "tokenizer_dir": str(tokenizer_dir),
                    "versions": {"torch": torch.__version__,
                                 "pytorch_lightning": pl.__version__,
                                 "python": platform.python_version()}}, indent=2)
        write_json(tmp / TRAINER_STATE_FILE, state, indent=2)
    return state
