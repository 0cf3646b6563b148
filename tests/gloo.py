"""Two CPU processes in one process group (gloo), for the tests of what DDP does."""

from __future__ import annotations

import socket
from collections.abc import Callable

import torch.multiprocessing as mp


def free_port() -> int:
    """A free TCP port on the loopback interface (the group's rendezvous)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def spawn_pair(worker: Callable[..., None], *args: object) -> None:
    """Run ``worker(rank, 2, port, *args)`` in 2 spawned processes and wait for both."""
    mp.spawn(worker, args=(2, free_port(), *args), nprocs=2, join=True)
