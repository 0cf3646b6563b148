"""Wall-clock and CPU time of each stage of a study run (where the main job's minutes go).

CPU seconds are the user + system time of the process that ran the stage (threads included:
Lucene's JVM runs in process, torch's intra-op threads too) plus that of its reaped child
processes. On a loaded machine wall time grows while CPU time stays close to the work done, so
both are recorded. Each stage's start is recorded as seconds after the study began (wall clock,
comparable across processes): where stages run concurrently they overlap, and the study's wall
time is less than the sum of theirs.
"""

from __future__ import annotations

import os
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
    start_s: float = 0.0
    """Seconds from the study's start to the stage's start."""
    worker: str = ""
    """The process that ran it (``pid <n>``): a stage worker, or the flow's own process."""


@dataclass
class StageClock:
    """Times the stages of one study; :meth:`summary` is the JSON written beside the results.

    ``origin`` is the study's start (``time.time()``); a clock made in another process with the
    same origin times that process's stages on the same scale (:meth:`add` collects them).
    """

    stages: list[StageTime] = field(default_factory=list)
    origin: float = field(default_factory=time.time)
    concurrent_stages: int = 1

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the block as stage ``name`` (recorded even when the block raises)."""
        start = time.time() - self.origin
        wall, cpu = time.perf_counter(), cpu_seconds()
        try:
            yield
        finally:
            self.stages.append(StageTime(name, round(time.perf_counter() - wall, 2),
                                         round(cpu_seconds() - cpu, 2), round(start, 2),
                                         f"pid {os.getpid()}"))

    def add(self, timed: StageTime) -> None:
        """Record a stage timed elsewhere (a worker process's clock with this origin)."""
        self.stages.append(timed)

    def summary(self) -> dict:
        """``{"stages": [...], "total": {wall_s, cpu_s, stages_wall_s}, "concurrent_stages"}``:
        ``wall_s`` from the study's start to the end of its last stage, ``stages_wall_s`` the
        sum of the stages' wall times (the same when they run one at a time, but for the gaps)."""
        end = max((s.start_s + s.wall_s for s in self.stages), default=0.0)
        return {"stages": [asdict(s) for s in self.stages],
                "total": {"wall_s": round(end, 2),
                          "cpu_s": round(sum(s.cpu_s for s in self.stages), 2),
                          "stages_wall_s": round(sum(s.wall_s for s in self.stages), 2)},
                "concurrent_stages": self.concurrent_stages}

    def table(self) -> str:
        """A plain-text table of the stages, for the end of the run's log."""
        lines = [f"{'stage':<24}{'start s':>10}{'wall s':>10}{'CPU s':>10}"]
        lines += [f"{s.stage:<24}{s.start_s:>10.1f}{s.wall_s:>10.1f}{s.cpu_s:>10.1f}"
                  for s in self.stages]
        total = self.summary()["total"]
        lines.append(f"{'total':<24}{'':>10}{total['wall_s']:>10.1f}{total['cpu_s']:>10.1f}")
        if self.concurrent_stages > 1:
            lines.append(f"(up to {self.concurrent_stages} stages at a time: the stages' wall "
                         f"times add up to {total['stages_wall_s']:.1f} s)")
        return "\n".join(lines)
