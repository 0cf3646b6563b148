"""The study's timeline: when each stage ran and in which process (a Gantt chart, PNG).

Drawn from ``results/study_timings.json`` (:meth:`tasks.pipeline.stage_clock.StageClock.summary`):
one row per stage in registry order, a bar from its start to its end coloured by the process
that ran it, its wall and CPU seconds beside the bar. With stages side by side it shows what
the table does not: which branch is the critical path and how long a worker idles at the end.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tasks.io.atomic import atomic_write

#: The legend's name for stages timed before the clock recorded the process (older JSON).
UNKNOWN_WORKER = "process not recorded"
_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")


def write_stage_timeline(summary: Mapping, png_path: Path, title: str = "") -> Path:
    """Write the Gantt chart of ``summary`` (its ``stages``: ``stage``, ``start_s``,
    ``wall_s``, ``cpu_s``, ``worker``) to ``png_path``, atomically."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    stages = list(summary.get("stages", ()))
    if not stages:
        raise ValueError("no stages to draw: the study timed none")
    ran_by = [s.get("worker") or UNKNOWN_WORKER for s in stages]
    workers = list(dict.fromkeys(ran_by))
    colours = {w: _COLOURS[i % len(_COLOURS)] for i, w in enumerate(workers)}
    end = max(s["start_s"] + s["wall_s"] for s in stages)

    figure = Figure(figsize=(9, 0.9 + 0.32 * len(stages)), dpi=110)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for row, (stage, worker) in enumerate(zip(stages, ran_by, strict=True)):
        axes.barh(row, stage["wall_s"], left=stage["start_s"], height=0.6,
                  color=colours[worker])
        axes.text(stage["start_s"] + stage["wall_s"] + end * 0.005, row,
                  f"{stage['wall_s']:.0f} s ({stage['cpu_s']:.0f} CPU-s)", va="center",
                  fontsize=7)
    axes.axvline(end, color="grey", linestyle="--", linewidth=0.8)
    axes.set_yticks(range(len(stages)), [s["stage"] for s in stages], fontsize=8)
    axes.invert_yaxis()  # the first stage on top
    axes.set_xlim(0, end * 1.18)
    axes.set_xlabel(f"seconds from the study's start (ends at {end:.0f} s)")
    axes.set_title(title or "Study timeline: each stage's wall time, by process")
    axes.grid(True, axis="x", alpha=0.3)
    axes.legend(handles=[Patch(color=colours[w], label=w) for w in workers], fontsize=7,
                loc="upper right", title="process", title_fontsize=7)
    figure.tight_layout()
    png_path = Path(png_path)
    with atomic_write(png_path, mode="wb") as handle:
        figure.savefig(handle, format="png", metadata={"Software": None})
    return png_path
