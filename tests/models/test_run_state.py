"""models.resume's run state: the loss history and torch's random state in a checkpoint; under
DDP (2 CPU processes, gloo) every process gets its own random state back from the checkpoint
that process 0 writes."""

from __future__ import annotations

import os

import torch
import torch.distributed as dist
from gloo import spawn_pair

from models.resume import restore_run_state, save_run_state


def test_one_process_gets_its_history_and_random_state_back():
    torch.manual_seed(3)
    checkpoint: dict = {}
    save_run_state(checkpoint, [{"step": 1, "loss": 2.0}])
    expected = torch.rand(4)
    torch.manual_seed(99)
    assert restore_run_state(checkpoint) == [{"step": 1, "loss": 2.0}]
    assert torch.equal(torch.rand(4), expected)


def _worker(rank: int, world: int, port: int, out_dir: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        torch.manual_seed(0)
        torch.rand(5 + 7 * rank)  # the processes' draws differ (batches of other shapes)
        checkpoint: dict = {}
        save_run_state(checkpoint, [])  # every process builds it
        expected = torch.rand(4)  # what this process draws next
        if rank == 0:  # process 0 writes it, every process loads it
            torch.save(checkpoint, os.path.join(out_dir, "ckpt.pt"))
        dist.barrier()
        loaded = torch.load(os.path.join(out_dir, "ckpt.pt"), weights_only=False)
        torch.manual_seed(123)
        restore_run_state(loaded)
        torch.save({"expected": expected, "got": torch.rand(4)},
                   os.path.join(out_dir, f"{rank}.pt"))
    finally:
        dist.destroy_process_group()


def test_under_ddp_each_process_gets_its_own_random_state_back(tmp_path):
    spawn_pair(_worker, str(tmp_path))
    results = [torch.load(tmp_path / f"{rank}.pt") for rank in (0, 1)]
    assert not torch.equal(results[0]["expected"], results[1]["expected"])
    for result in results:
        assert torch.equal(result["got"], result["expected"])
