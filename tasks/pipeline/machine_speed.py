"""How fast this machine is right now: two short probes, recorded with the study's stage times
so that runs on different days (or a shared, throttled virtual machine) can be compared.

The same 2-core VM has run the demo 15-40 % slower on some days with no change of code
(``bench/RESULTS.md``): the wall time of a run says little without the speed of the machine that
day. The first probe is torch's float32 matrix product (the kernel behind most of the study's
CPU time) with torch's current thread count, in GFLOP/s as the median over short rounds. The
second is the Python interpreter on one thread (millions of loop iterations a second): about a
fifth of a run's sampled time is the study's own Python (py-spy, ``bench/RESULTS.md``), and two
machines whose matrix products differ by 20 % have run the same demo 2x apart (a 2-core AMD EPYC
in 10-11 minutes, a 2-core Intel Xeon in 18-21).
"""

from __future__ import annotations

import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Side of the square matrices (2 * N**3 floating-point operations per product).
MATRIX_SIZE = 384
#: The instruction-set extensions that decide which code path torch's BLAS takes (and so the
#: last bits of a training): a cloud VM's model name is often generic ("AMD EPYC Processor"),
#: so two CPU generations behind one name tell apart only by these and by family/model.
ISA_FLAGS = ("avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_bf16")


def _cpuinfo_fields(cpuinfo: Path = Path("/proc/cpuinfo")) -> dict[str, str]:
    """The first processor's ``key: value`` lines of ``/proc/cpuinfo`` ({} elsewhere)."""
    if not cpuinfo.is_file():
        return {}
    fields: dict[str, str] = {}
    for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.strip():
            break
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    return fields


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else ``platform.processor()``)."""
    return _cpuinfo_fields().get("model name") or platform.processor() or platform.machine()


def cpu_identity(cpuinfo: Path = Path("/proc/cpuinfo")) -> dict[str, Any]:
    """``{cpu_id, isa}``: vendor, family, model and stepping (e.g. ``AuthenticAMD family 25
    model 1 stepping 1``; '' off Linux) and which of :data:`ISA_FLAGS` the CPU has."""
    fields = _cpuinfo_fields(cpuinfo)
    cpu_id = " ".join(f"{label} {fields[key]}" if label else fields[key]
                      for key, label in (("vendor_id", ""), ("cpu family", "family"),
                                         ("model", "model"), ("stepping", "stepping"))
                      if key in fields)
    flags = set(fields.get("flags", "").split())
    return {"cpu_id": cpu_id, "isa": [flag for flag in ISA_FLAGS if flag in flags]}


def _median_rate(step: Callable[[], object], units_per_step: float, seconds: float,
                 rounds: int) -> float:
    """Median of ``units_per_step`` x steps a second over ``rounds`` rounds of about
    ``seconds / rounds`` each, rounded to two decimals."""
    rates = []
    for _ in range(rounds):
        done, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds / rounds:
            step()
            done += 1
        rates.append(done * units_per_step / elapsed)
    return round(statistics.median(rates), 2)


def matmul_gflops(seconds: float = 1.0, rounds: int = 5, size: int = MATRIX_SIZE) -> float:
    """Median GFLOP/s of ``size`` x ``size`` float32 products over ``rounds`` rounds of about
    ``seconds / rounds`` each (after one untimed product)."""
    import torch

    generator = torch.Generator().manual_seed(0)
    a = torch.rand(size, size, generator=generator)
    b = torch.rand(size, size, generator=generator)
    torch.mm(a, b)
    return _median_rate(lambda: torch.mm(a, b), 2.0 * size ** 3 / 1e9, seconds, rounds)


#: Iterations of the interpreter probe's loop between two clock reads.
_LOOP_CHUNK = 20_000


def python_loop_mops(seconds: float = 0.5, rounds: int = 5) -> float:
    """Median millions of iterations a second of a small pure-Python loop (an addition, a
    multiplication and a modulo per iteration) over ``rounds`` rounds of about
    ``seconds / rounds`` each, on this thread."""
    chunk = _LOOP_CHUNK

    def loop() -> int:
        total = 0
        for i in range(chunk):
            total += i * i % 7
        return total

    return _median_rate(loop, chunk / 1e6, seconds, rounds)


def machine_speed(seconds: float = 1.0) -> dict[str, Any]:
    """``{cpu, cpu_id, isa, cores, torch_threads, matmul_gflops, python_mops}`` of this machine
    now (the interpreter probe takes half of ``seconds`` more)."""
    import torch

    return {"cpu": cpu_model(), **cpu_identity(), "cores": os.cpu_count(),
            "torch_threads": torch.get_num_threads(), "matmul_gflops": matmul_gflops(seconds),
            "python_mops": python_loop_mops(seconds / 2)}
