"""How fast this machine multiplies matrices right now: a one-second probe, recorded with the
study's stage times so that runs on different days (or a shared, throttled virtual machine)
can be compared.

The same 2-core VM has run the demo 15-40 % slower on some days with no change of code
(``bench/RESULTS.md``): the wall time of a run says little without the speed of the machine that
day. The probe is torch's float32 matrix product (the kernel behind most of the study's CPU
time) with torch's current thread count, reported in GFLOP/s as the median over short rounds.
"""

from __future__ import annotations

import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any

#: Side of the square matrices (2 * N**3 floating-point operations per product).
MATRIX_SIZE = 384


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else ``platform.processor()``)."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def matmul_gflops(seconds: float = 1.0, rounds: int = 5, size: int = MATRIX_SIZE) -> float:
    """Median GFLOP/s of ``size`` x ``size`` float32 products over ``rounds`` rounds of about
    ``seconds / rounds`` each (after one untimed product)."""
    import torch

    generator = torch.Generator().manual_seed(0)
    a = torch.rand(size, size, generator=generator)
    b = torch.rand(size, size, generator=generator)
    torch.mm(a, b)
    flop = 2.0 * size ** 3
    rates = []
    for _ in range(rounds):
        done, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds / rounds:
            torch.mm(a, b)
            done += 1
        rates.append(done * flop / elapsed / 1e9)
    return round(statistics.median(rates), 2)


def machine_speed(seconds: float = 1.0) -> dict[str, Any]:
    """``{cpu, cores, torch_threads, matmul_gflops}`` of this machine now."""
    import torch

    return {"cpu": cpu_model(), "cores": os.cpu_count(), "torch_threads": torch.get_num_threads(),
            "matmul_gflops": matmul_gflops(seconds)}
