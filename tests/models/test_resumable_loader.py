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
    # the second pass, one batch handed out beyond the trained ones (as loader workers fetch
    # ahead; Lightning itself does not with a sized loader): the state counts trained ones
    batches = iter(stopped)
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


@pytest.mark.parametrize("loaded", [False, True])
def test_a_pass_asked_for_but_given_no_batch_draws_nothing(loaded):
    """Lightning resuming after an epoch's last batch asks for that finished epoch's iterator
    and takes nothing from it: the next pass is the one the stopped run went on with (and a
    state taken meanwhile is still the loaded one)."""
    trained = [0]
    stopped = _resumable(trained)
    seen = _batches(stopped, passes=1)
    trained[0] = len(stopped)  # the first pass trained to its end
    state = stopped.state_dict()
    whole = _batches(_resumable([0]))
    loader = _resumable([0])
    if loaded:
        loader.load_state_dict(state)
    iter(loader)  # the finished epoch's iterator: no batch taken
    if loaded:
        assert torch.equal(loader.state_dict()["generator"], state["generator"])
        assert seen + _batches(loader, passes=PASSES - 1) == whole
    else:
        assert _batches(loader) == whole


def test_a_state_before_the_first_pass_starts_from_the_beginning():
    state = _resumable([0]).state_dict()
    resumed = _resumable([0])
    resumed.load_state_dict(state)
    assert _batches(resumed) == _batches(_resumable([0]))


# Under DDP: each process's share, from a seeded DistributedSampler whose epoch Lightning sets.

def _shard(rank: int, trained: list[int], replicas: int = 2) -> ResumableLoader:
    return ResumableLoader(DATA, BATCH, SEED, torch.utils.data.default_collate,
                           trained_batches=lambda: trained[0], num_replicas=replicas, rank=rank)


def _epochs(loader, epochs: range) -> list[list[int]]:
    out = []
    for epoch in epochs:
        loader.sampler.set_epoch(epoch)  # as Lightning's fit loop does before each epoch
        out += [batch.tolist() for batch in loader]
    return out


def test_under_ddp_each_process_gets_the_distributed_samplers_share():
    from torch.utils.data import DistributedSampler

    for rank in (0, 1):
        sampler = DistributedSampler(DATA, num_replicas=2, rank=rank, shuffle=True, seed=SEED)
        plain = DataLoader(DATA, batch_size=BATCH, sampler=sampler)
        assert _epochs(_shard(rank, [0]), range(PASSES)) == _epochs(plain, range(PASSES))
    shares = [_epochs(_shard(rank, [0]), range(1)) for rank in (0, 1)]
    together = [i for share in shares for batch in share for i in batch]
    assert len(together) == 24 and set(together) == set(DATA)  # two equal shares: one padded


@pytest.mark.parametrize("trained_in_epoch", [0, 1, 2, 3])
@pytest.mark.parametrize("read_before_set_epoch", [False, True])
def test_under_ddp_a_state_resumes_every_process_at_its_next_batch(trained_in_epoch,
                                                                   read_before_set_epoch):
    """3 batches per process and epoch; a state after all 3 is the next epoch's start. Loader
    workers read the sampler before Lightning sets the restored epoch: the state sets it."""
    trained = [0]
    stopped = [_shard(rank, trained) for rank in (0, 1)]
    seen = [_epochs(loader, range(1)) for loader in stopped]  # epoch 0, whole
    for rank, loader in enumerate(stopped):
        loader.sampler.set_epoch(1)
        seen[rank] += [batch.tolist() for batch in loader][:trained_in_epoch]
    trained[0] = trained_in_epoch
    state = stopped[0].state_dict()  # rank 0 saves the checkpoint; every process loads it
    done = trained_in_epoch == 3
    assert state == {"num_replicas": 2, "epoch": 2 if done else 1,
                     "skip_batches": 0 if done else trained_in_epoch}
    for rank in (0, 1):
        resumed = _shard(rank, [0])
        resumed.load_state_dict(state)
        first = 2 if done else 1
        rest = []
        if read_before_set_epoch:  # the restored epoch's rest, before any set_epoch
            rest = [batch.tolist() for batch in resumed]
            first += 1
        rest += _epochs(resumed, range(first, PASSES))  # Lightning sets each epoch
        assert seen[rank] + rest == _epochs(_shard(rank, [0]), range(PASSES))


def test_a_state_from_another_number_of_processes_restarts_the_epoch_with_a_warning():
    trained = [2]
    single = _resumable(trained)
    next(iter(single))
    with pytest.warns(UserWarning, match="saved by a run in 1 process"):
        _shard(0, [0]).load_state_dict(single.state_dict())
    ddp = _shard(0, trained)
    ddp.sampler.set_epoch(0)
    next(iter(ddp))
    resumed = _resumable([0])
    with pytest.warns(UserWarning, match="saved by a run in 2 process"):
        resumed.load_state_dict(ddp.state_dict())
    assert _batches(resumed) == _batches(_resumable([0]))


class _DrawingCollate:
    """A collate function that draws from its own generator (as the paraphraser's, which
    forces words out of vocabulary): each batch comes back with its draw."""

    def __init__(self) -> None:
        import random

        self.rng = random.Random(5)

    def get_state(self):
        return self.rng.getstate()

    def set_state(self, state) -> None:
        self.rng.setstate(state)

    def __call__(self, items):
        return [*items, round(self.rng.random(), 6)]


def _drawing(trained: list[int]) -> ResumableLoader:
    return ResumableLoader(DATA, BATCH, SEED, _DrawingCollate(),
                           trained_batches=lambda: trained[0])


@pytest.mark.parametrize("trained_in_pass", [0, 2, 5, 6])
def test_a_drawing_collate_function_resumes_with_its_draws(trained_in_pass):
    loader = _drawing([0])
    whole = [batch for _ in range(PASSES) for batch in loader]
    trained = [0]
    stopped = _drawing(trained)
    seen = list(stopped)  # the first pass
    batches = iter(stopped)  # Lightning fetches no batch ahead from a loader with a length
    seen += [next(batches) for _ in range(trained_in_pass)]
    trained[0] = trained_in_pass
    state = stopped.state_dict()
    resumed = _drawing([0])
    resumed.load_state_dict(state)
    rest = [batch for _ in range(PASSES - 1) for batch in resumed]
    assert seen + rest[:len(whole) - len(seen)] == whole
