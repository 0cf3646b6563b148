"""Wall-clock and CPU time of each stage of a study run (where the main job's minutes go).

CPU seconds are this process's user + system time (threads included: Lucene's JVM runs in
process, torch's intra-op threads too) plus that of its reaped child processes. On a loaded
machine wall time grows while CPU time stays close to the work done, so both are recorded.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and its reaped children so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@dataclass
class StageTime:
    """One stage's cost."""

    stage: str
    wall_s: float
    cpu_s: float


@dataclass
class StageClock:
    """Times a sequence of stages; :meth:`summary` is the JSON written beside the results."""

    stages: list[StageTime] = field(default_factory=list)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the block as stage ``name`` (recorded even when the block raises)."""
        wall, cpu = time.perf_counter(), cpu_seconds()
        try:
            yield
        finally:
            self.stages.append(StageTime(name, round(time.perf_counter() - wall, 2),
                                         round(cpu_seconds() - cpu, 2)))

    def summary(self) -> dict:
        """``{"stages": [...], "total": {wall_s, cpu_s}}``."""
        return {"stages": [asdict(s) for s in self.stages],
                "total": {"wall_s": round(sum(s.wall_s for s in self.stages), 2),
                          "cpu_s": round(sum(s.cpu_s for s in self.stages), 2)}}

    def table(self) -> str:
        """A plain-text table of the stages, for the end of the run's log."""
        lines = [f"{'stage':<24}{'wall s':>10}{'CPU s':>10}"]
        lines += [f"{s.stage:<24}{s.wall_s:>10.1f}{s.cpu_s:>10.1f}" for s in self.stages]
        total = self.summary()["total"]
        lines.append(f"{'total':<24}{total['wall_s']:>10.1f}{total['cpu_s']:>10.1f}")
        return "\n".join(lines)
