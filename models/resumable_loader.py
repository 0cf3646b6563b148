"""A shuffled training loader that a Lightning checkpoint brings back to where training stopped.

Lightning saves a loader's position only when the loader has ``state_dict`` /
``load_state_dict``. A plain ``DataLoader`` has neither, so a run resumed from a checkpoint
taken in the middle of an epoch starts that epoch's batches again from the first one. Lightning
warns that this "can cause unreliable results": the resumed run trains on other batches than
the run it continues.

:class:`ResumableLoader` is the ``DataLoader(shuffle=True, generator=seeded)`` of
:class:`models.datamodule.SeededDataModule`, with the same batches in the same order. Its state
is the shuffling generator's state when the current pass began, plus how many of the pass's
batches were trained. Loading that state replays the pass's shuffle and skips those batches'
indices without loading them. The trained count comes from the trainer's own progress
(``trained_batches``), not from what the loader has handed out (loader workers fetch ahead).
A pass begins (draws its shuffle) at its first batch, not when its iterator is asked for:
resumed after an epoch's last batch, Lightning asks for that finished epoch's iterator and
takes nothing from it.

A collate function that draws random numbers (the paraphraser's forced out-of-vocabulary
words) and offers ``get_state``/``set_state`` is part of the state, in one process without
loader workers: Lightning does not fetch ahead from a loader with a length, so at a
checkpoint the collate function has collated exactly the trained batches.

Under DDP (``num_replicas`` > 1) the sampler is a ``DistributedSampler`` (seeded, shuffled:
the one Lightning would put in, so it leaves this one in place) whose order is fixed by the
seed and the epoch; the state is that epoch and its trained batches, the same count on every
process (the sampler gives each an equal share). Each process loads the checkpoint, sets the
sampler's epoch (loader workers read the sampler before Lightning sets it) and skips its own
share's first batches.

Exact in one process without loader workers (the default) and under DDP. In one process with
loader workers, a resume after the first epoch shuffles differently: the persistent workers'
iterator drew its seed from the shuffling generator once, a new one draws again. The loader
warns when it loads such a state.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
from torch.utils.data import DataLoader, DistributedSampler, RandomSampler, Sampler


class _SkippingSampler(Sampler[int]):
    """``RandomSampler``'s indices; the next pass drops its first ``skip`` indices unread."""

    def __init__(self, inner: RandomSampler) -> None:
        self.inner = inner
        self.skip = 0

    def __len__(self) -> int:
        return len(self.inner)

    def __iter__(self) -> Iterator[int]:
        skip, self.skip = self.skip, 0
        indices = iter(self.inner)  # draws from the generator exactly as RandomSampler does
        for _ in range(skip):
            next(indices)
        yield from indices


class _SkippingDistributedSampler(DistributedSampler):
    """``DistributedSampler``'s indices; the pass of epoch ``skip_epoch`` drops its first
    ``skip`` indices unread (a pass of another epoch drops none)."""

    skip_epoch = -1
    skip = 0

    def __iter__(self) -> Iterator[int]:
        indices = super().__iter__()
        skip = self.skip if self.epoch == self.skip_epoch else 0
        self.skip_epoch, self.skip = -1, 0
        for _ in range(skip):
            next(indices, None)
        return indices


class _PassOnFirstBatch(Iterator[Any]):
    """A pass that begins, drawing from the shuffling generator, at its first batch.

    Lightning resuming from a checkpoint taken after an epoch's last batch (after its
    validation) asks for that finished epoch's iterator and takes no batch from it before the
    next epoch's; a pass begun there would draw the generator once more than the stopped run
    did, and shuffle the next epoch differently."""

    def __init__(self, start: Callable[[], Iterator[Any]]) -> None:
        self._start: Callable[[], Iterator[Any]] | None = start
        self._batches: Iterator[Any] | None = None

    def __next__(self) -> Any:
        if self._batches is None:
            assert self._start is not None
            self._batches, self._start = self._start(), None
        return next(self._batches)


class ResumableLoader(DataLoader):
    """``DataLoader(dataset, batch_size, shuffle=True, generator=Generator().manual_seed(seed))``
    whose position a checkpoint keeps (see the module docstring).

    ``trained_batches`` returns how many batches of the current pass have been trained (the
    trainer's progress). With ``num_replicas`` > 1 it is process ``rank``'s share of each
    epoch, shuffled by ``seed`` and the epoch (``DistributedSampler``).

    A ``collate_fn`` that draws random numbers and has ``get_state``/``set_state`` (the
    paraphraser's, which forces words out of vocabulary) gets its state saved and restored
    too, in one process without loader workers (elsewhere its draws after a resume differ).
    """

    def __init__(self, dataset: Sequence[Any], batch_size: int, seed: int,
                 collate_fn: Callable[[list[Any]], Any], trained_batches: Callable[[], int],
                 num_workers: int = 0, num_replicas: int = 1, rank: int = 0) -> None:
        generator = torch.Generator().manual_seed(seed)
        sampler: _SkippingSampler | _SkippingDistributedSampler
        if num_replicas > 1:
            sampler = _SkippingDistributedSampler(dataset, num_replicas, rank, shuffle=True,
                                                  seed=seed)
        else:
            sampler = _SkippingSampler(RandomSampler(dataset, generator=generator))
        super().__init__(dataset, batch_size=batch_size, sampler=sampler, generator=generator,
                         collate_fn=collate_fn, num_workers=num_workers,
                         persistent_workers=num_workers > 0)
        stateful = (hasattr(collate_fn, "get_state") and hasattr(collate_fn, "set_state")
                    and num_workers == 0 and num_replicas == 1)
        self._collate = collate_fn if stateful else None
        self._skipping = sampler
        self._trained_batches = trained_batches
        self._pass_start: torch.Tensor | None = None
        self._in_pass = False  # whether the current pass has begun (drawn its shuffle)
        self._resume: tuple[torch.Tensor, int, Any] | None = None

    def __iter__(self) -> Iterator[Any]:
        if isinstance(self._skipping, _SkippingDistributedSampler):
            return super().__iter__()  # the sampler's epoch fixes the order (and the skip)
        self._in_pass = False
        return _PassOnFirstBatch(self._start_pass)

    def _start_pass(self) -> Iterator[Any]:
        """The pass's batches: the resumed place first, if a state was loaded."""
        skip = 0
        if self._resume is not None:
            state, skip, collate_state = self._resume
            self._resume = None
            self.generator.set_state(state)
            if self._collate is not None and collate_state is not None:
                self._collate.set_state(collate_state)
        self._pass_start = self.generator.get_state()
        self._in_pass = True
        self._skipping.skip = skip * self.batch_size
        return super().__iter__()

    def state_dict(self) -> dict[str, Any]:
        """Where training stands: the pass's start and its trained batches, or, once every
        batch of the pass is trained (or before the first pass), the next pass's start.
        Under DDP: the sampler's epoch and its trained batches."""
        trained = self._trained_batches()
        if isinstance(self._skipping, _SkippingDistributedSampler):
            epoch = self._skipping.epoch
            if trained >= len(self):  # the epoch is done: the next one, from its start
                epoch, trained = epoch + 1, 0
            return {"num_replicas": self._skipping.num_replicas, "epoch": epoch,
                    "skip_batches": trained}
        if self._resume is not None:  # loaded, and its pass not begun: still the place
            generator, skip, collate = self._resume
            return {"generator": generator, "skip_batches": skip,
                    **({"collate": collate} if collate is not None else {})}
        if not self._in_pass or trained >= len(self):
            state = {"generator": self.generator.get_state(), "skip_batches": 0}
        else:
            state = {"generator": self._pass_start, "skip_batches": trained}
        if self._collate is not None:  # it has collated the trained batches, no more
            state["collate"] = self._collate.get_state()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Make the next pass the one the state was taken in, without its trained batches.
        A state saved with another number of processes cannot place this run in its epoch
        (the shares differ): it warns, and the epoch's batches start again."""
        distributed = isinstance(self._skipping, _SkippingDistributedSampler)
        saved_replicas = int(state_dict.get("num_replicas", 1))
        replicas = self._skipping.num_replicas if distributed else 1
        if saved_replicas != replicas:
            warnings.warn(f"the checkpoint's train-loader place was saved by a run in "
                          f"{saved_replicas} process(es), this run has {replicas}: the "
                          "interrupted epoch is trained again from its first batch, in an "
                          "order of this run's own", stacklevel=2)
            return
        if distributed:
            epoch = int(state_dict["epoch"])
            self._skipping.set_epoch(epoch)  # (before loader workers read the sampler)
            self._skipping.skip_epoch = epoch
            self._skipping.skip = int(state_dict["skip_batches"]) * self.batch_size
            return
        if self.num_workers > 0:
            warnings.warn("resuming a loader with workers: after the first epoch the resumed "
                          "epoch is shuffled differently from the stopped run's (exact with "
                          "num_workers=0)", stacklevel=2)
        self._resume = (state_dict["generator"], int(state_dict["skip_batches"]),
                        state_dict.get("collate"))
