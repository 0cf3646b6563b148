"""torch's CPU thread count for one piece of work, restored afterwards."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Inside, torch runs with ``n`` intra-op CPU threads (``None``: leave the setting); the
    previous count is restored on exit.

    Small models decode and train fastest on one thread: with two, every step waits on the
    OpenMP team, and once a second thread of the process (a task runner's worker) has its own
    team the two teams compete for the cores (measured: paraphrase generation 2x slower).
    """
    if n is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
