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
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
from torch.utils.data import DataLoader, RandomSampler, Sampler


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


class ResumableLoader(DataLoader):
    """``DataLoader(dataset, batch_size, shuffle=True, generator=Generator().manual_seed(seed))``
    whose position a checkpoint keeps (see the module docstring).

    ``trained_batches`` returns how many batches of the current pass have been trained (the
    trainer's progress).
    """

    def __init__(self, dataset: Sequence[Any], batch_size: int, seed: int,
                 collate_fn: Callable[[list[Any]], Any], trained_batches: Callable[[], int],
                 num_workers: int = 0) -> None:
        generator = torch.Generator().manual_seed(seed)
        sampler = _SkippingSampler(RandomSampler(dataset, generator=generator))
        super().__init__(dataset, batch_size=batch_size, sampler=sampler, generator=generator,
                         collate_fn=collate_fn, num_workers=num_workers,
                         persistent_workers=num_workers > 0)
        self._skipping = sampler
        self._trained_batches = trained_batches
        self._pass_start: torch.Tensor | None = None
        self._resume: tuple[torch.Tensor, int] | None = None

    def __iter__(self) -> Iterator[Any]:
        skip = 0
        if self._resume is not None:
            state, skip = self._resume
            self._resume = None
            self.generator.set_state(state)
        self._pass_start = self.generator.get_state()
        self._skipping.skip = skip * self.batch_size
        return super().__iter__()

    def state_dict(self) -> dict[str, Any]:
        """Where training stands: the pass's start and its trained batches, or, once every
        batch of the pass is trained (or before the first pass), the next pass's start."""
        trained = self._trained_batches()
        if self._pass_start is None or trained >= len(self):
            return {"generator": self.generator.get_state(), "skip_batches": 0}
        return {"generator": self._pass_start, "skip_batches": trained}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Make the next pass the one the state was taken in, without its trained batches."""
        self._resume = (state_dict["generator"], int(state_dict["skip_batches"]))
