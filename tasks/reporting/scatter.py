"""Figure 2: 2-d embeddings (t-SNE) of two passage sets, one panel per encoder (PNG + CSV).

The CSV is long (``panel,set,x,y``), one row per point, for ``dvc plots`` (scatter).
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from tasks.io.atomic import atomic_write


def write_embedding_scatter(panels: Mapping[str, tuple[np.ndarray, Sequence[str]]],
                            png_path: Path, csv_path: Path | None = None,
                            title: str = "") -> list[Path]:
    """``panels``: ``{panel title: (points (n, 2), set label per point)}`` -> one scatter per
    panel, a colour per set (same colours in every panel); PNG + CSV written atomically."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if not panels:
        raise ValueError("no panels to plot")
    png_path = Path(png_path)
    csv_path = Path(csv_path) if csv_path is not None else png_path.with_suffix(".csv")
    for name, (points, labels) in panels.items():
        if points.ndim != 2 or points.shape != (len(labels), 2):
            raise ValueError(f"panel {name!r}: {len(labels)} labels but points of shape "
                             f"{points.shape} (expected ({len(labels)}, 2))")
    with atomic_write(csv_path, newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["panel", "set", "x", "y"])
        for name, (points, labels) in panels.items():
            writer.writerows([name, label, f"{x:.4f}", f"{y:.4f}"]
                             for label, (x, y) in zip(labels, points.tolist(), strict=True))
    sets = list(dict.fromkeys(label for _, labels in panels.values() for label in labels))
    colours = dict(zip(sets, ("tab:blue", "tab:orange", "tab:green", "tab:red"), strict=False))
    figure = Figure(figsize=(5 * len(panels), 4.5), dpi=110)
    FigureCanvasAgg(figure)
    for i, (name, (points, labels)) in enumerate(panels.items(), start=1):
        axes = figure.add_subplot(1, len(panels), i)
        labels = np.asarray(labels)
        for label in sets:
            chosen = points[labels == label]
            axes.scatter(chosen[:, 0], chosen[:, 1], s=8, alpha=0.7, label=label,
                         color=colours.get(label))
        axes.set_title(name, fontsize=10)
        axes.set_xticks([])
        axes.set_yticks([])
        axes.legend(fontsize=8)
    if title:
        figure.suptitle(title, fontsize=11)
    figure.tight_layout()
    with atomic_write(png_path, mode="wb") as handle:
        figure.savefig(handle, format="png", metadata={"Software": None})
    return [png_path, csv_path]
