"""ResumableLoader: the batches of ``DataLoader(shuffle=True, generator=seeded)`` in the same
order, and a state taken after any trained batch brings a fresh loader to the next one."""

from __future__ import annotations

import pytest
import torch
from torch.utils.data import DataLoader

from models.resumable_loader import ResumableLoader

DATA = list(range(23))  # 6 batches of 4, the last one short
BATCH, SEED, PASSES = 4, 11, 3


def _batches(loader, passes: int = PASSES) -> list[list[int]]:
    return [batch.tolist() for _ in range(passes) for batch in loader]


def _resumable(trained: list[int]) -> ResumableLoader:
    return ResumableLoader(DATA, BATCH, SEED, torch.utils.data.default_collate,
                           trained_batches=lambda: trained[0])


def test_same_batches_in_the_same_order_as_the_plain_shuffled_loader():
    plain = DataLoader(DATA, batch_size=BATCH, shuffle=True,
                       generator=torch.Generator().manual_seed(SEED))
    assert _batches(_resumable([0])) == _batches(plain)


@pytest.mark.parametrize("trained_in_pass", [0, 1, 3, 5, 6])
def test_a_state_after_any_trained_batch_resumes_at_the_next_one(trained_in_pass):
    whole = _batches(_resumable([0]))
    trained = [0]
    stopped = _resumable(trained)
    seen = _batches(stopped, passes=1)  # the first pass, whole
    batches = iter(stopped)  # the second pass; one batch fetched ahead, as Lightning does
    for _ in range(trained_in_pass + 1):
        try:
            seen.append(next(batches).tolist())
        except StopIteration:  # the look-ahead found the pass's end
            break
    trained[0] = trained_in_pass
    state = stopped.state_dict()
    seen = seen[:len(stopped) + trained_in_pass]  # what the stopped run trained

    resumed = _resumable([0])
    resumed.load_state_dict(state)
    rest = [batch.tolist() for batch in resumed]  # the rest of the second pass (or the third)
    rest += _batches(resumed, passes=PASSES - 2 if trained_in_pass < len(stopped) else 0)
    assert seen + rest == whole


def test_a_state_before_the_first_pass_starts_from_the_beginning():
    state = _resumable([0]).state_dict()
    resumed = _resumable([0])
    resumed.load_state_dict(state)
    assert _batches(resumed) == _batches(_resumable([0]))
