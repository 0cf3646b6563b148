"""A training run's checkpoint directory: resume the same run after a kill, start another over.

The trainings that run long on real data (DPR, readers) write Lightning's ``last.ckpt`` every
``checkpoint_every_n_steps`` into a checkpoint directory, next to ``run.json`` naming the run
by a fingerprint of its configuration, initial weights and training data. A later call with
the same fingerprint resumes from ``last.ckpt``; any other run clears the directory first.
Once the trained model is saved the directory goes (:func:`discard_checkpoints`): a finished
run is never resumed, and a reader's checkpoint alone is ~0.26 GB on the demo.

What resuming restores beyond Lightning's own state (step, optimizer, scheduler, the train
loader's place: :mod:`models.resumable_loader`) is the module's loss history and torch's random
state, so the steps after the checkpoint draw the dropout masks the stopped run would have:
:func:`save_run_state` and :func:`restore_run_state`, called from a module's
``on_save_checkpoint`` / ``on_load_checkpoint``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import torch
from pydantic import BaseModel

from tasks.io.atomic import file_fingerprint, write_json

RUN_FILE = "run.json"
LAST_CKPT = "last.ckpt"
#: The module's loss history in a checkpoint.
HISTORY_KEY = "qastress_history"
#: torch's random state after the checkpoint's step (dropout of the steps after it).
RNG_KEY = "qastress_rng"


def run_fingerprint(config: BaseModel, init_model: Path, train: Iterable[Any],
                    extra: Mapping[str, Any] | None = None) -> str:
    """What makes a checkpoint resumable: config, initial weights, training data (each item by
    its ``repr``) and ``extra`` (the resolved hardware: ``accelerator=auto`` on another
    machine is another run; the validation data)."""
    digest = hashlib.sha256()
    digest.update(json.dumps(config.model_dump(mode="json"), sort_keys=True).encode())
    digest.update(json.dumps(extra or {}, sort_keys=True, default=repr).encode())
    digest.update(file_fingerprint(Path(init_model)).encode())
    for item in train:
        digest.update(repr(item).encode())
    return digest.hexdigest()


def launched_rank() -> bool:
    """True in a process that Lightning's DDP launcher started for another rank (local rank
    > 0 or node rank > 0): it must not reset the checkpoint directory rank 0 works in."""
    return any(int(os.environ.get(name) or 0) > 0 for name in ("LOCAL_RANK", "NODE_RANK"))


def prepare_checkpoints(checkpoint_dir: Path, fingerprint: str) -> Path | None:
    """``last.ckpt`` to resume from, when it belongs to this run; else a clean directory
    (made by rank 0 only) and None."""
    run_file = checkpoint_dir / RUN_FILE
    last = checkpoint_dir / LAST_CKPT
    if run_file.is_file() and last.is_file():
        recorded = json.loads(run_file.read_text(encoding="utf-8")).get("fingerprint")
        if recorded == fingerprint:
            return last
    if launched_rank():
        return None
    if checkpoint_dir.exists():
        shutil.rmtree(checkpoint_dir)
    checkpoint_dir.mkdir(parents=True)
    write_json(run_file, {"fingerprint": fingerprint})
    return None


def last_checkpoint_callbacks(checkpoint_dir: Path, every_n_steps: int) -> dict[str, Any]:
    """Trainer keyword arguments that write ``last.ckpt`` into ``checkpoint_dir`` every
    ``every_n_steps`` optimizer steps and at no other time (streamed to disk and renamed into
    place: :mod:`models.checkpoint_io`): ``callbacks`` (a list to extend) and ``plugins``.

    Lightning's ``ModelCheckpoint(save_last=True)`` also saves when training ends if it has
    not saved yet (a run shorter than ``every_n_steps``): a checkpoint of a finished run,
    which the caller discards once the model is saved. That save is left out."""
    from models.checkpoint_io import StepCheckpoint, StreamingAtomicCheckpointIO

    checkpoint = StepCheckpoint(dirpath=str(checkpoint_dir), save_last=True, save_top_k=0,
                                every_n_train_steps=every_n_steps,
                                enable_version_counter=False)
    return {"callbacks": [checkpoint], "plugins": [StreamingAtomicCheckpointIO()]}


def checkpointing(checkpoint_dir: Path | None, every_n_steps: int, fingerprint: Callable[[], str]
                  ) -> tuple[Path | None, dict[str, Any]]:
    """A training's resume set-up: ``(last.ckpt to resume from or None, Trainer keyword
    arguments)`` (:func:`prepare_checkpoints` with the run's ``fingerprint()``, then
    :func:`last_checkpoint_callbacks`); ``(None, {})`` without a checkpoint directory."""
    if checkpoint_dir is None:
        return None, {}
    resume_from = prepare_checkpoints(Path(checkpoint_dir), fingerprint())
    return resume_from, last_checkpoint_callbacks(Path(checkpoint_dir), every_n_steps)


def discard_checkpoints(checkpoint_dir: Path) -> None:
    """Remove a finished run's checkpoint directory (call it once the model is saved; on
    the global-zero process only, after the others are done)."""
    shutil.rmtree(checkpoint_dir, ignore_errors=True)


def _rng_state() -> dict[str, Any]:
    """This process's torch random state: CPU, and CUDA when in use."""
    return {"cpu": torch.get_rng_state(),
            "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else []}


def _distributed() -> tuple[int, int]:
    """``(rank, world size)`` of the default process group, ``(0, 1)`` without one."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def save_run_state(checkpoint: dict[str, Any], history: list[dict[str, Any]]) -> None:
    """Put the loss history and torch's random state into a checkpoint being saved.

    Under DDP every process builds the checkpoint and process 0 writes it: the random states
    of all processes are gathered (they differ once batches of different shapes have drawn
    dropout), so each process gets its own back (:func:`restore_run_state`)."""
    checkpoint[HISTORY_KEY] = list(history)
    rank, world = _distributed()
    if world == 1:
        checkpoint[RNG_KEY] = _rng_state()
        return
    import torch.distributed as dist

    states: list[Any] = [None] * world
    dist.all_gather_object(states, _rng_state())
    checkpoint[RNG_KEY] = {"per_rank": states}


def restore_run_state(checkpoint: dict[str, Any]) -> list[dict[str, Any]]:
    """Restore this process's torch random state from a checkpoint being loaded (the CUDA
    states when this machine has as many devices; under DDP the state of this process's rank,
    when the checkpoint has one per rank of this world size); return its loss history."""
    rng = checkpoint.get(RNG_KEY)
    if rng is not None and "per_rank" in rng:
        rank, world = _distributed()
        rng = rng["per_rank"][rank] if len(rng["per_rank"]) == world else None
    if rng is not None:
        torch.set_rng_state(rng["cpu"])
        if rng["cuda"] and torch.cuda.is_available() \
                and len(rng["cuda"]) == torch.cuda.device_count():
            torch.cuda.set_rng_state_all(rng["cuda"])
    return list(checkpoint.get(HISTORY_KEY, []))
