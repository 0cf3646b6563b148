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
(``trained_batches``), not from what the loader has handed out: Lightning fetches one batch
ahead of the one it trains.

A collate function that draws random numbers (the paraphraser's forced out-of-vocabulary
words) and offers ``get_state``/``set_state`` is part of the state: its state before the
next batch to train (it has collated the batch Lightning fetched ahead already).

Under DDP (``num_replicas`` > 1) the sampler is a ``DistributedSampler`` (seeded, shuffled:
the one Lightning would put in, so it leaves this one in place) whose order is fixed by the
seed and the epoch Lightning sets; the state is that epoch and its trained batches, the same
count on every process (the sampler gives each an equal share). Each process loads the
checkpoint and skips its own share's first batches.
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


class _CollateWithState:
    """A collate function that draws random numbers (``get_state``/``set_state``), with its
    state before each batch of the pass: the state a resumed pass must start its next batch
    from, since Lightning has collated a batch ahead of the one it trains."""

    KEEP = 4  # states of the latest batches kept (Lightning prefetches one)

    def __init__(self, collate: Any) -> None:
        self.collate = collate
        self.next_batch = 0
        self.before: dict[int, Any] = {}

    def start(self, batch: int) -> None:
        """A pass (re)starts at its batch ``batch``."""
        self.next_batch = batch
        self.before.clear()

    def state_before(self, batch: int) -> Any:
        """The collate function's state before it collated the pass's batch ``batch`` (its
        current state when it has not collated that batch yet)."""
        return self.before.get(batch, self.collate.get_state())

    def __call__(self, items: list[Any]) -> Any:
        self.before[self.next_batch] = self.collate.get_state()
        self.before.pop(self.next_batch - self.KEEP, None)
        self.next_batch += 1
        return self.collate(items)


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
        stateful = (hasattr(collate_fn, "get_state") and hasattr(collate_fn, "set_state")
                    and num_workers == 0 and num_replicas == 1)
        collate = _CollateWithState(collate_fn) if stateful else None
        super().__init__(dataset, batch_size=batch_size, sampler=sampler, generator=generator,
                         collate_fn=collate or collate_fn, num_workers=num_workers,
                         persistent_workers=num_workers > 0)
        self._collate = collate
        self._skipping = sampler
        self._trained_batches = trained_batches
        self._pass_start: torch.Tensor | None = None
        self._resume: tuple[torch.Tensor, int, Any] | None = None

    def __iter__(self) -> Iterator[Any]:
        if isinstance(self._skipping, _SkippingDistributedSampler):
            return super().__iter__()  # the sampler's epoch fixes the order (and the skip)
        skip = 0
        if self._resume is not None:
            state, skip, collate_state = self._resume
            self._resume = None
            self.generator.set_state(state)
            if self._collate is not None and collate_state is not None:
                self._collate.collate.set_state(collate_state)
        self._pass_start = self.generator.get_state()
        self._skipping.skip = skip * self.batch_size
        if self._collate is not None:
            self._collate.start(skip)
        return super().__iter__()

    def state_dict(self) -> dict[str, Any]:
        """Where training stands: the pass's start and its trained batches, or, once every
        batch of the pass is trained (or before the first pass), the next pass's start.
        Under DDP: the sampler's epoch and its trained batches."""
        trained = self._trained_batches()
        if isinstance(self._skipping, _SkippingDistributedSampler):
            return {"num_replicas": self._skipping.num_replicas, "epoch": self._skipping.epoch,
                    "skip_batches": trained}
        if self._pass_start is None or trained >= len(self):
            state = {"generator": self.generator.get_state(), "skip_batches": 0}
            if self._collate is not None:
                state["collate"] = self._collate.collate.get_state()
            return state
        state = {"generator": self._pass_start, "skip_batches": trained}
        if self._collate is not None:
            state["collate"] = self._collate.state_before(trained)
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
                          "interrupted epoch's batches start again", stacklevel=2)
            return
        if distributed:
            self._skipping.skip_epoch = int(state_dict["epoch"])
            self._skipping.skip = int(state_dict["skip_batches"]) * self.batch_size
            return
        self._resume = (state_dict["generator"], int(state_dict["skip_batches"]),
                        state_dict.get("collate"))
