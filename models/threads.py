"""torch's CPU thread count for one piece of work, restored afterwards."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Inside, torch runs with ``n`` intra-op CPU threads (``None``: leave the setting); the
    previous count is restored on exit.

    Small models decode and train fastest on one thread: with two, every step waits on the
    OpenMP team, and once a second thread of the process (a task runner's worker) has its own
    team the two teams compete for the cores (measured: paraphrase generation 2x slower).

    With torch's OpenMP backend the count is per calling thread (``omp_set_num_threads``), so
    concurrent workers each pinning their own count do not undo each other.
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


def machine_cpu_threads() -> int:
    """A thread count fixed for this machine, whatever the process set before: a positive
    ``OMP_NUM_THREADS`` when given, else the CPUs this process may run on (its affinity).

    torch's own start-up default is the physical cores (the same on machines without SMT);
    unlike :func:`torch.get_num_threads` this never reflects an earlier ``set_num_threads``.
    """
    value = os.environ.get("OMP_NUM_THREADS", "").strip()
    if value.isdigit() and int(value) > 0:
        return int(value)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


@contextlib.contextmanager
def pinned_torch_threads(n: int | None) -> Iterator[None]:
    """:func:`torch_threads` with ``n``, or with :func:`machine_cpu_threads` for ``None``:
    always a fixed count, never the caller's (for work whose floating-point results must not
    depend on what ran before in the process, e.g. encoding vectors)."""
    with torch_threads(machine_cpu_threads() if n is None else n):
        yield
