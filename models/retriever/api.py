"""Train a DPR bi-encoder with Lightning; resume after a kill; save the encoders.

:func:`train_retriever` writes Lightning checkpoints (``last.ckpt`` every
``checkpoint_every_n_steps``) into ``checkpoint_dir`` next to a ``run.json`` naming the run
(config, data and initial model fingerprints). A second call with the same run resumes from
``last.ckpt`` (global step, optimizer, scheduler, loss history); a different run starts over.
The encoders are saved atomically at the end (see :mod:`models.retriever.export`).
"""

from __future__ import annotations

import platform
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from models import resume
from models.lightning_quiet import quiet_lightning
from models.retriever.config import RetrieverTrainConfig
from models.retriever.data import BiEncoderSample
from models.retriever.export import (
    QUESTION_DIR,
    TRAINER_STATE_FILE,
    TRAINING_ARGS_FILE,
    check_dpr_convertible,
    save_biencoder,
)
from models.threads import pinned_torch_threads
from tasks.io.atomic import atomic_dir, write_json

if TYPE_CHECKING:
    from models.retriever.network import BiEncoder



def resolve_hardware(config: RetrieverTrainConfig) -> dict[str, Any]:
    """Lightning ``accelerator/devices/num_nodes/strategy/precision`` of the configuration:
    ``strategy="auto"`` with several devices or nodes is DDP; ``precision="auto"`` is
    bf16-mixed on a CUDA device with bf16, else 32-true (bf16 never runs on CPU)."""
    cuda = config.accelerator in ("cuda", "gpu") or (
        config.accelerator == "auto" and torch.cuda.is_available())
    precision = config.precision
    if precision == "auto":
        precision = "bf16-mixed" if cuda and torch.cuda.is_bf16_supported() else "32-true"
    elif precision == "bf16-mixed" and not cuda:
        raise ValueError("precision bf16-mixed needs a CUDA device (accelerator cpu or no GPU)")
    strategy = config.strategy
    n = config.n_devices()
    if strategy == "auto" and ((n is not None and n > 1) or config.num_nodes > 1):
        strategy = "ddp"
    devices = list(config.devices) if isinstance(config.devices, tuple) else config.devices
    return {"accelerator": config.accelerator, "devices": devices,
            "num_nodes": config.num_nodes, "strategy": strategy, "precision": precision}


def run_fingerprint(config: RetrieverTrainConfig, init_model: Path,
                    train: Sequence[BiEncoderSample],
                    val: Sequence[BiEncoderSample] | None = None) -> str:
    """What makes a checkpoint resumable: config, resolved hardware, initial weights,
    training and validation samples."""
    return resume.run_fingerprint(config, init_model, train,
                                  {"hardware": resolve_hardware(config), "val": list(val or [])})


def build_trainer(config: RetrieverTrainConfig, checkpoint_dir: Path, has_val: bool,
                  callbacks: Sequence[Any] = ()) -> Any:
    """The Lightning Trainer of a run: hardware from the config, gradient clipping, a
    ``last.ckpt`` every ``checkpoint_every_n_steps`` (:mod:`models.resume`), no logger."""
    import pytorch_lightning as pl

    from models.spawned_quiet import QuietSpawnedProcesses

    checkpoints = resume.last_checkpoint_callbacks(checkpoint_dir,
                                                   config.checkpoint_every_n_steps)
    return pl.Trainer(
        **resolve_hardware(config),
        max_steps=config.max_steps or -1,
        max_epochs=config.max_epochs if config.max_steps is None else -1,
        # the gradient cache optimizes by hand (the module clips): Lightning refuses its own
        # clipping with manual optimization
        gradient_clip_val=None if config.grad_cache_chunk else config.grad_clip,
        gradient_clip_algorithm="norm",
        logger=False, enable_progress_bar=False, enable_model_summary=False,
        num_sanity_val_steps=0, limit_val_batches=1.0 if has_val else 0,
        log_every_n_steps=config.log_every_n_steps, default_root_dir=str(checkpoint_dir),
        callbacks=[*checkpoints["callbacks"], QuietSpawnedProcesses(), *callbacks],
        use_distributed_sampler=True,
        plugins=checkpoints["plugins"],
    )


@dataclass
class FitResult:
    """A finished (or resumed and finished) training run."""

    module: Any
    trainer: Any
    tokenizer: Any
    init_dir: Path
    state: dict[str, Any]
    hardware: dict[str, Any]


def _expect_frozen_encoder_in_eval_mode(model: BiEncoder) -> None:
    """Silence Lightning's "modules in eval mode at the start of training" warning for exactly
    the frozen encoder's modules: ``BiEncoder.train`` keeps that encoder in eval mode (no
    dropout) on purpose. Any other module in eval mode changes the count, so it still warns."""
    frozen = model.frozen_module()
    if frozen is not None:
        count = sum(1 for _ in frozen.modules())
        warnings.filterwarnings(
            "ignore", message=rf"Found {count} module\(s\) in eval mode at the start of training")


def fit_biencoder(train: Sequence[BiEncoderSample], init_model: str | Path,
                  config: RetrieverTrainConfig, checkpoint_dir: str | Path, *,
                  val: Sequence[BiEncoderSample] | None = None,
                  callbacks: Sequence[Any] = ()) -> FitResult:
    """Train a bi-encoder from ``init_model`` (a BERT-family directory, or a retriever saved
    as a DPR pair: each side starts from its own encoder) on ``train``; resume from
    ``checkpoint_dir`` when it holds this run's ``last.ckpt``. ``callbacks``: more Lightning
    callbacks for the trainer (under ``ddp_spawn`` they must be picklable)."""
    if not train:
        raise ValueError("no training samples (the training set is empty)")
    import pytorch_lightning as pl
    from transformers import AutoTokenizer

    from models.end_state import END_STATE_FILE, EndState, read_end_state
    from models.retriever.datamodule import RetrieverDataModule
    from models.retriever.module import RetrieverModule
    from models.retriever.network import BiEncoder, is_saved_pair, saved_pair_pooling

    init_dir = Path(init_model)
    pair = is_saved_pair(init_dir)  # fine-tuning a saved DPR pair (e.g. DPR-NQ)
    if pair and config.shared:
        raise ValueError(f"{init_dir}: a saved question/passage pair cannot start a shared "
                         "encoder (shared: false to fine-tune it)")
    saved_pooling = saved_pair_pooling(init_dir) if pair else config.pooling
    if saved_pooling != config.pooling:
        raise ValueError(f"{init_dir}: a pair trained with pooling {saved_pooling!r} cannot be "
                         f"fine-tuned with pooling {config.pooling!r} (set pooling: "
                         f"{saved_pooling})")
    if not config.shared and not pair and config.pooling == "cls":
        check_dpr_convertible(init_dir, "init model")
    checkpoint_dir = Path(checkpoint_dir)
    hardware = resolve_hardware(config)
    resume_from = resume.prepare_checkpoints(checkpoint_dir,
                                             run_fingerprint(config, init_dir, train, val))
    tokenizer = AutoTokenizer.from_pretrained(str(init_dir / QUESTION_DIR if pair else init_dir))
    pl.seed_everything(config.seed, workers=True, verbose=False)
    model = (BiEncoder.from_saved_pair(init_dir, config.freeze) if pair else
             BiEncoder.from_pretrained(init_dir, config.shared, config.pooling, config.freeze))
    end_file = checkpoint_dir / END_STATE_FILE
    if not resume.launched_rank():
        end_file.unlink(missing_ok=True)
    module = RetrieverModule(model, config)
    data = RetrieverDataModule(train, val, tokenizer, config.batch_size, config.max_length,
                               config.seed, config.num_workers)
    started = time.time()
    with pinned_torch_threads(config.cpu_threads), quiet_lightning(), \
            warnings.catch_warnings():
        # (threads pinned: weights must not depend on the caller.) With the gradient cache's
        # manual optimization Lightning warns that a step checkpoint holds the weights after
        # the step: with the step count it stores, that is what resuming needs.
        warnings.filterwarnings("ignore", message="Using ModelCheckpoint with manual optim")
        _expect_frozen_encoder_in_eval_mode(model)
        trainer = build_trainer(config, checkpoint_dir, bool(val),
                                [EndState(end_file), *callbacks])
        trainer.fit(module, datamodule=data, ckpt_path=str(resume_from) if resume_from else None)
    seconds = time.time() - started
    end = read_end_state(end_file)  # (ddp_spawn: the loop state stays in the processes)
    metrics = end.get("metrics") or {k: float(v) for k, v in trainer.callback_metrics.items()}
    state = {
        "global_step": end.get("global_step", trainer.global_step),
        "epochs": end.get("epochs", trainer.current_epoch),
        "resumed_from": str(resume_from) if resume_from else None,
        "train_seconds": round(seconds, 3),
        "questions_per_second": (round(end.get("questions_seen", module.questions_seen)
                                       / seconds, 3) if seconds else None),
        "final_train_loss": metrics.get("train_loss"),
        "final_val_loss": metrics.get("val_loss"),
        "final_val_accuracy": metrics.get("val_accuracy"),
        "log_history": end.get("log_history", module.history),
    }
    return FitResult(module, trainer, tokenizer, init_dir, state, hardware)


def export_retriever(result: FitResult, out_dir: str | Path, n_train: int, n_val: int,
                     extra_args: Mapping[str, Any] | None = None) -> Path:
    """Save the trained encoders, ``training_args.json`` and ``trainer_state.json`` atomically
    into ``out_dir`` (on the global-zero process; the others wait)."""
    import pytorch_lightning as pl

    trainer, model = result.trainer, result.module.model
    if trainer.is_global_zero:
        config = result.module.config
        args = {**config.model_dump(mode="json"), **dict(extra_args or {}),
                "init_model": str(result.init_dir), "n_train": n_train, "n_val": n_val,
                "resolved": {**result.hardware, "device": str(trainer.strategy.root_device)},
                "versions": {"torch": torch.__version__, "pytorch_lightning": pl.__version__,
                             "python": platform.python_version()}}
        model.to("cpu").float().eval()
        with atomic_dir(out_dir) as tmp:
            save_biencoder(model, result.tokenizer, tmp)
            write_json(tmp / TRAINING_ARGS_FILE, args, indent=2)
            write_json(tmp / TRAINER_STATE_FILE, result.state, indent=2)
    trainer.strategy.barrier()
    return Path(out_dir)


def train_retriever(train: Sequence[BiEncoderSample], init_model: str | Path,
                    config: RetrieverTrainConfig | Mapping[str, Any] | None, out_dir: str | Path,
                    checkpoint_dir: str | Path, *, val: Sequence[BiEncoderSample] | None = None,
                    extra_args: Mapping[str, Any] | None = None,
                    callbacks: Sequence[Any] = ()) -> dict[str, Any]:
    """:func:`fit_biencoder` then :func:`export_retriever`; returns the trainer state (steps,
    seconds, final losses, questions/s, loss history)."""
    if not isinstance(config, RetrieverTrainConfig):
        config = RetrieverTrainConfig.model_validate(dict(config or {}))
    result = fit_biencoder(train, init_model, config, checkpoint_dir, val=val,
                           callbacks=callbacks)
    export_retriever(result, out_dir, len(train), len(val or []), extra_args)
    if result.trainer.is_global_zero:  # (after export_retriever's barrier)
        resume.discard_checkpoints(Path(checkpoint_dir))
    return result.state

