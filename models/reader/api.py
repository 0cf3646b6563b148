"""Train, save, load and run the extractive reader (``AutoModelForQuestionAnswering``).

A saved reader is a Hugging Face checkpoint directory, written atomically: what
``save_pretrained`` of the model and its tokenizer write (``config.json``,
``model.safetensors``, ``tokenizer.json``, ...), so ``AutoModelForQuestionAnswering`` and the
``question-answering`` pipeline load it as they are, plus:

    reader_config.json   window and decoding settings (WindowConfig) used to train it
    training_args.json   the ReaderConfig used, data sizes, resolved hardware, versions
    trainer_state.json   loss history, steps, seconds

Any BERT-family QA checkpoint loads too (without ``reader_config.json`` it gets the default or
the given window settings).
"""

from __future__ import annotations

import contextlib
import json
import platform
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from models import resume
from models.hf_logging import quiet_transformers
from models.lightning_quiet import quiet_lightning
from models.paraphraser.checkpoint import resolve_hardware
from models.reader.config import READER_CONFIG_FILE, ReaderConfig, WindowConfig
from models.reader.data import WindowCollator
from models.reader.decoding import Prediction, SpanCollector, context_mask, window_top_spans
from models.reader.features import Example, Featurized, featurize
from models.threads import pinned_torch_threads
from tasks.io.atomic import atomic_dir, write_json

TRAINING_ARGS_FILE = "training_args.json"
TRAINER_STATE_FILE = "trainer_state.json"


#: Config attributes holding the hidden-state dropout of BERT-family (``hidden_dropout_prob``:
#: BERT, RoBERTa, ELECTRA, MiniLM) and DistilBERT (``dropout``) checkpoints.
HIDDEN_DROPOUT_KEYS = ("hidden_dropout_prob", "dropout")


def load_qa_model(path: str | Path, hidden_dropout: float | None = None) -> tuple[Any, Any]:
    """``(AutoModelForQuestionAnswering, fast tokenizer)`` of a local checkpoint directory;
    ``hidden_dropout`` replaces the checkpoint's hidden-state dropout (attention dropout stays)."""
    from transformers import AutoConfig, AutoModelForQuestionAnswering, AutoTokenizer

    path = Path(path)
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"{path}: not a Hugging Face checkpoint (no config.json)")
    overrides: dict[str, float] = {}
    if hidden_dropout is not None:
        config = AutoConfig.from_pretrained(str(path))
        overrides = {k: hidden_dropout for k in HIDDEN_DROPOUT_KEYS if hasattr(config, k)}
        if not overrides:
            raise ValueError(f"{path}: {type(config).__name__} has none of "
                             f"{HIDDEN_DROPOUT_KEYS}; cannot set hidden_dropout")
    with quiet_transformers():
        model = AutoModelForQuestionAnswering.from_pretrained(str(path), **overrides)
    tokenizer = AutoTokenizer.from_pretrained(str(path), use_fast=True)
    if not tokenizer.is_fast:
        raise ValueError(f"{path}: no fast tokenizer (tokenizer.json); the reader needs "
                         "character offsets")
    return model, tokenizer


class Reader:
    """An extractive reader: :meth:`predict` answers questions with spans of their contexts."""

    def __init__(self, model: Any, tokenizer: Any, window: WindowConfig | None = None,
                 device: str | torch.device = "cpu", bf16: bool = False) -> None:
        self.device = torch.device(device)
        self.model = model.to(self.device).eval()
        self.tokenizer = tokenizer
        self.window = window or WindowConfig()
        self.bf16 = bf16 and self.device.type == "cuda"

    @classmethod
    def from_pretrained(cls, path: str | Path, device: str | torch.device = "cpu",
                        window: WindowConfig | None = None, bf16: bool = False) -> Reader:
        """Load a checkpoint directory; ``window`` overrides its ``reader_config.json``."""
        path = Path(path)
        model, tokenizer = load_qa_model(path)
        if window is None and (path / READER_CONFIG_FILE).is_file():
            window = WindowConfig.model_validate(
                json.loads((path / READER_CONFIG_FILE).read_text(encoding="utf-8")))
        return cls(model, tokenizer, window, device, bf16)

    def save_pretrained(self, path: str | Path, training_args: Mapping[str, Any] | None = None,
                        trainer_state: Mapping[str, Any] | None = None) -> Path:
        """Write the checkpoint directory atomically (replacing an existing one)."""
        path = Path(path)
        with atomic_dir(path) as tmp:
            self.model.save_pretrained(str(tmp), safe_serialization=True)
            self.tokenizer.save_pretrained(str(tmp))
            write_json(tmp / READER_CONFIG_FILE, self.window.model_dump(mode="json"), indent=2)
            if training_args is not None:
                write_json(tmp / TRAINING_ARGS_FILE, dict(training_args), indent=2)
            if trainer_state is not None:
                write_json(tmp / TRAINER_STATE_FILE, dict(trainer_state), indent=2)
        return path

    def featurize(self, examples: Sequence[Example]) -> Featurized:
        """The windows of ``examples`` (no labels)."""
        return featurize(self.tokenizer, examples, self.window, labels=False)

    @torch.inference_mode()
    def predict(self, examples: Sequence[Example], batch_size: int = 64,
                cpu_threads: int | None = None) -> list[Prediction]:
        """The best span (and n-best) of each example, in input order.

        Windows are sorted by length and padded per batch (little padding); scores are the
        same whatever the batch size up to floating-point summation order. The model runs with
        ``cpu_threads`` torch CPU threads (None: the machine's count), never the caller's.
        """
        feats = self.featurize(examples)
        order = sorted(range(len(feats.windows)), key=lambda i: (-len(feats.windows[i]), i))
        collate = WindowCollator(self.tokenizer.pad_token_id, labels=False)
        collector = SpanCollector(self.window.n_best)
        autocast = (torch.autocast("cuda", dtype=torch.bfloat16) if self.bf16
                    else contextlib.nullcontext())
        with pinned_torch_threads(cpu_threads):
            for begin in range(0, len(order), max(1, batch_size)):
                windows = [feats.windows[i] for i in order[begin : begin + batch_size]]
                batch = {k: v.to(self.device) for k, v in collate(windows).items()}
                with autocast:
                    out = self.model(**batch)
                mask = context_mask(windows, batch["input_ids"].shape[1]).to(self.device)
                scores, starts, ends = window_top_spans(out.start_logits, out.end_logits, mask,
                                                        self.window.n_best,
                                                        self.window.max_answer_length)
                collector.add(windows, scores.cpu(), starts.cpu(), ends.cpu())
        return collector.predictions([ex.id for ex in examples],
                                     [ex.context for ex in examples])

    def answers(self, examples: Sequence[Example], batch_size: int = 64,
                cpu_threads: int | None = None) -> dict[str, str]:
        """``{question id: answer text}``: the SQuAD predictions format."""
        return {p.id: p.text for p in self.predict(examples, batch_size, cpu_threads)}


def load_reader(path: str | Path, device: str | torch.device = "cpu",
                bf16: bool = False) -> Reader:
    """Load a reader saved by :func:`train_reader` (or any HF QA checkpoint directory)."""
    return Reader.from_pretrained(path, device=device, bf16=bf16)


def train_reader(examples: Sequence[Example], config: ReaderConfig | Mapping[str, Any] | None,
                 out_dir: str | Path, base_model: str | Path, *,
                 val_examples: Sequence[Example] | None = None,
                 checkpoint_dir: str | Path | None = None) -> Path:
    """Fine-tune the checkpoint directory ``base_model`` on SQuAD-style examples; save it.

    ``config.model`` is recorded; ``base_model`` is its resolved local directory. Every
    example needs at least one answer (the first is the label). With ``checkpoint_dir``,
    Lightning writes ``last.ckpt`` there every ``config.checkpoint_every_n_steps`` and a
    second call with the same run (config, base model, training questions) resumes from it,
    ending with the weights of a run never stopped (:mod:`models.resume`). Returns
    ``out_dir``.
    """
    if not isinstance(config, ReaderConfig):
        config = ReaderConfig.model_validate(dict(config or {}))
    missing = [ex.id for ex in examples if not ex.answers]
    if missing:
        raise ValueError(f"{len(missing)} training questions without an answer: {missing[:5]}")
    import pytorch_lightning as pl  # only training needs Lightning (a slow import)

    from models.end_state import END_STATE_FILE, EndState, read_end_state
    from models.reader.module import ReaderDataModule, ReaderModule
    from models.spawned_quiet import QuietSpawnedProcesses

    pl.seed_everything(config.seed, workers=True, verbose=False)
    # the new head: seeded initialisation
    model, tokenizer = load_qa_model(base_model, hidden_dropout=config.hidden_dropout)
    window = config.window()
    train = featurize(tokenizer, examples, window)
    if not train.windows:
        raise ValueError("no training questions")
    val = featurize(tokenizer, val_examples, window) if val_examples else None
    hardware = resolve_hardware(config)
    was_deterministic = torch.are_deterministic_algorithms_enabled()
    was_warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    resume_from, checkpointing = resume.checkpointing(
        None if checkpoint_dir is None else Path(checkpoint_dir), config.checkpoint_every_n_steps,
        lambda: resume.run_fingerprint(config, Path(base_model), _questions(examples), {
            "hardware": hardware, "val": list(_questions(val_examples or []))}))
    started = time.time()
    module = ReaderModule(model, config)
    data = ReaderDataModule(train.windows, val.windows if val else None,
                            tokenizer.pad_token_id, config.batch_size, config.seed,
                            config.num_workers)
    try:
        with pinned_torch_threads(config.cpu_threads), quiet_lightning(), \
                tempfile.TemporaryDirectory(prefix="qastress-reader-") as scratch:
            trainer = pl.Trainer(
                **hardware, max_steps=config.max_steps or -1,
                max_epochs=config.max_epochs if config.max_steps is None else -1,
                gradient_clip_val=config.grad_clip, deterministic=config.deterministic,
                logger=False, enable_checkpointing=bool(checkpointing),
                enable_progress_bar=False, enable_model_summary=False, num_sanity_val_steps=0,
                limit_val_batches=1.0 if val else 0,
                log_every_n_steps=config.log_every_n_steps, default_root_dir=scratch,
                callbacks=[EndState(Path(scratch) / END_STATE_FILE), QuietSpawnedProcesses(),
                           *checkpointing.get("callbacks", [])],
                plugins=checkpointing.get("plugins"))
            trainer.fit(module, datamodule=data,
                        ckpt_path=str(resume_from) if resume_from else None)
            end = read_end_state(Path(scratch) / END_STATE_FILE)  # (ddp_spawn: not in trainer)
    finally:
        torch.use_deterministic_algorithms(was_deterministic, warn_only=was_warn_only)
    if trainer.is_global_zero:
        training_args = {
            **config.model_dump(mode="json"), "base_model": str(base_model),
            "resolved": {**hardware, "device": str(trainer.strategy.root_device)},
            "n_train_questions": len(examples), "n_train_windows": len(train.windows),
            "truncated_questions": len(train.truncated_questions),
            "unlabelled_answers": len(train.unlabelled),
            "n_val_questions": len(val_examples or ()),
            "versions": _versions(pl.__version__)}
        trainer_state = {
            "global_step": end.get("global_step", trainer.global_step),
            "epochs": end.get("epochs", trainer.current_epoch),
            "train_seconds": round(time.time() - started, 3),
            "resumed_from": str(resume_from) if resume_from else None,
            "final_train_loss": _float(trainer.callback_metrics.get("train_loss")),
            "final_val_loss": _float(trainer.callback_metrics.get("val_loss")),
            "log_history": end.get("log_history", module.history)}
        Reader(module.model.to("cpu").float(), tokenizer, window).save_pretrained(
            out_dir, training_args, trainer_state)
    trainer.strategy.barrier()
    if checkpoint_dir is not None and trainer.is_global_zero:  # the reader is saved
        resume.discard_checkpoints(Path(checkpoint_dir))
    return Path(out_dir)


def _questions(examples: Sequence[Example]) -> Iterator[tuple[Any, ...]]:
    """Each example's id, question, context and answers (what a run fingerprint reads)."""
    for ex in examples:
        yield ex.id, ex.question, ex.context, [(a.text, a.answer_start) for a in ex.answers]


def _versions(lightning: str) -> dict[str, str]:
    import transformers

    return {"torch": torch.__version__, "transformers": transformers.__version__,
            "pytorch_lightning": lightning, "python": platform.python_version()}


def _float(value: Any) -> float | None:
    return None if value is None else float(value)
