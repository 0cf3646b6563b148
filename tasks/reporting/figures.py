"""Figures: top-k accuracy against k for several retrievers (PNG + CSV for ``dvc plots``).

Matplotlib is used through its object API with the Agg canvas (no pyplot state, no display).
The CSV is wide, one row per k and one column per retriever (macro accuracy in percent), so
``dvc plots`` can draw it with ``x: k`` and ``y: [<retriever>, ...]``.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path

from tasks.io.atomic import atomic_write


def accuracy_vs_k_rows(metrics_by_retriever: Mapping[str, Mapping],
                       ks: Sequence[int]) -> tuple[list[str], list[list[float]]]:
    """Header ``["k", <retriever>, ...]`` and one row per k of macro accuracy (percent)."""
    header = ["k", *metrics_by_retriever]
    rows = [[k, *[m["macro"][f"top{k}"] for m in metrics_by_retriever.values()]] for k in ks]
    return header, rows


def write_accuracy_vs_k(metrics_by_retriever: Mapping[str, Mapping], ks: Sequence[int],
                        png_path: Path, csv_path: Path | None = None,
                        title: str = "EntityQuestions: top-k retrieval accuracy") -> list[Path]:
    """Write the accuracy-vs-k plot (PNG) and its data (CSV, default: next to the PNG)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullFormatter

    if not metrics_by_retriever:
        raise ValueError("no retrievers to plot")
    png_path = Path(png_path)
    csv_path = Path(csv_path) if csv_path is not None else png_path.with_suffix(".csv")
    ks = sorted(ks)
    header, rows = accuracy_vs_k_rows(metrics_by_retriever, ks)
    with atomic_write(csv_path, newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)

    figure = Figure(figsize=(6, 4), dpi=120)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for name, metrics in metrics_by_retriever.items():
        axes.plot(ks, [metrics["macro"][f"top{k}"] for k in ks], marker="o", label=name)
    if len(ks) > 1 and ks[0] > 0 and ks[-1] / ks[0] >= 10:
        axes.set_xscale("log")
        axes.xaxis.set_minor_formatter(NullFormatter())
    axes.set_xticks(ks, [str(k) for k in ks])
    axes.set_xlabel("k (retrieved passages)")
    axes.set_ylabel("top-k accuracy (%, macro over relations)")
    axes.set_ylim(0, 100)
    axes.set_title(title)
    axes.grid(True, alpha=0.3)
    axes.legend()
    figure.tight_layout()
    with atomic_write(png_path, mode="wb") as handle:
        figure.savefig(handle, format="png", metadata={"Software": None})
    return [png_path, csv_path]
