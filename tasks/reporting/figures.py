"""Figures (PNG + CSV for ``dvc plots``): top-k accuracy against k for several retrievers, and
top-k accuracy per subject-frequency bucket (Figure 1 of the paper).

Matplotlib is used through its object API with the Agg canvas (no pyplot state, no display).
The accuracy-vs-k CSV is wide, one row per k and one column per retriever (macro accuracy in
percent), so ``dvc plots`` can draw it with ``x: k`` and ``y: [<retriever>, ...]``. The bucket
CSV is long (``set,relation,bucket,retriever,accuracy,questions``), for ``x: bucket``,
``y: accuracy``.
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


BUCKET_CSV_HEADER = ["set", "relation", "bucket", "retriever", "accuracy", "questions"]
_SET_STYLES = {"rand-ent": "-", "train-ent": "--"}
#: The panel of every relation's questions together, drawn first when there are several.
POOLED = "pooled over relations"
#: Normal quantile of the 95 % Wilson intervals drawn around the bucket curves.
_Z95 = 1.959963984540054


def bucket_accuracy_rows(metrics: Mapping, k: int) -> list[list]:
    """Long rows ``[set, relation, bucket, retriever, top-k accuracy, questions]`` of the
    bucket metrics (``retrieval_buckets.json``); empty buckets (no accuracy) are left out."""
    rows: list[list] = []
    for bucket_set, relations in metrics["sets"].items():
        for relation, buckets in relations.items():
            for bucket_name, entry in buckets.items():
                bucket = int(bucket_name.removeprefix("bucket"))
                for retriever in metrics["retrievers"]:
                    accuracy = entry.get(retriever)
                    if accuracy is not None:
                        rows.append([bucket_set, relation, bucket, retriever,
                                     accuracy[f"top{k}"], int(entry.get("questions", 0))])
    return rows


def pooled_bucket_rows(rows: Sequence[Sequence]) -> list[list]:
    """Rows of :func:`bucket_accuracy_rows` pooled over relations: per set, bucket and
    retriever, the accuracy over every relation's questions of that bucket (weighted by their
    questions), relation :data:`POOLED`."""
    sums: dict[tuple, list[float]] = {}
    for bucket_set, _, bucket, retriever, accuracy, questions in rows:
        total = sums.setdefault((bucket_set, bucket, retriever), [0.0, 0])
        total[0] += accuracy * questions
        total[1] += questions
    return [[bucket_set, POOLED, bucket, retriever, round(hits / n, 2), n]
            for (bucket_set, bucket, retriever), (hits, n) in sums.items() if n]


def wilson_interval(accuracy: float, questions: int, z: float = _Z95) -> tuple[float, float]:
    """The Wilson score interval (percent) of an accuracy (percent) over ``questions``: unlike
    the normal one it stays in [0, 100] and is wide where a bucket holds a handful."""
    if questions < 1:
        return 0.0, 100.0
    p, n = accuracy / 100.0, questions
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return 100.0 * max(0.0, centre - half), 100.0 * min(1.0, centre + half)


def bucket_axis_label(bucket_order: str, n_buckets: int) -> tuple[list[str], str]:
    """Tick labels for buckets ``0..n-1`` and the x-axis label, rare/frequent as numbered."""
    labels = [str(b) for b in range(n_buckets)]
    rare, frequent = (0, n_buckets - 1) if bucket_order == "ascending" else (n_buckets - 1, 0)
    labels[rare] += "\nrare"
    if frequent != rare:
        labels[frequent] += "\nfrequent"
    direction = ("rare -> frequent" if bucket_order == "ascending" else "frequent -> rare")
    return labels, f"subject frequency bucket ({direction}, by hyperlink count)"


def write_bucket_accuracy(metrics: Mapping, k: int, png_path: Path,
                          csv_path: Path | None = None,
                          title: str = "EntityQuestions: top-{k} accuracy per subject-frequency "
                          "bucket") -> list[Path]:
    """Figure 1 of the paper: one panel per relation (and, with several, a first panel of their
    questions pooled), x = bucket, y = top-``k`` accuracy, one colour per retriever, rand-ent
    solid and train-ent dashed; the first set's (rand-ent's) 95 % Wilson intervals shaded and
    its questions per bucket under the axis (``n``); PNG + long CSV (``dvc plots``:
    ``x: bucket``, ``y: accuracy``)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    png_path = Path(png_path)
    csv_path = Path(csv_path) if csv_path is not None else png_path.with_suffix(".csv")
    rows = bucket_accuracy_rows(metrics, k)
    with atomic_write(csv_path, newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(BUCKET_CSV_HEADER)
        writer.writerows(rows)

    relations = list(dict.fromkeys(r for rels in metrics["sets"].values() for r in rels))
    n_buckets = max((len(b) for rels in metrics["sets"].values() for b in rels.values()),
                    default=1)
    if not relations:
        raise ValueError("no relations to plot")
    if len(relations) > 1:
        rows = [*pooled_bucket_rows(rows), *rows]
        relations = [POOLED, *relations]
    columns = min(3, len(relations))
    n_rows = -(-len(relations) // columns)
    figure = Figure(figsize=(4.2 * columns, 3.6 * n_rows + 0.6), dpi=120)
    FigureCanvasAgg(figure)
    axes_grid = figure.subplots(n_rows, columns, squeeze=False, sharey=True)
    colours = {name: f"C{i}" for i, name in enumerate(metrics["retrievers"])}
    labels, xlabel = bucket_axis_label(metrics.get("bucket_order", "ascending"), n_buckets)
    first_set = next(iter(metrics["sets"]), None)
    for index, axes in enumerate(axes_grid.flat):
        if index >= len(relations):
            axes.set_visible(False)
            continue
        relation = relations[index]
        counts: dict[int, int] = {}
        for bucket_set in metrics["sets"]:
            for retriever in metrics["retrievers"]:
                points = [(b, acc, n) for s, r, b, name, acc, n in rows
                          if s == bucket_set and r == relation and name == retriever]
                if not points:
                    continue
                xs = [b for b, _, _ in points]
                if bucket_set == first_set:  # one set's bands: more would hide each other
                    counts.update((b, n) for b, _, n in points)
                    bands = [wilson_interval(acc, n) for _, acc, n in points]
                    axes.fill_between(xs, [low for low, _ in bands],
                                      [high for _, high in bands], color=colours[retriever],
                                      alpha=0.12, linewidth=0)
                axes.plot(xs, [a for _, a, _ in points], marker="o", markersize=3,
                          color=colours[retriever], linestyle=_SET_STYLES.get(bucket_set, ":"),
                          label=f"{retriever} ({bucket_set})")
        axes.set_title(relation)
        ticks = [f"{label}\nn={counts[b]}" if b in counts else label
                 for b, label in enumerate(labels)]
        axes.set_xticks(range(n_buckets), ticks, fontsize=6)
        axes.set_ylim(0, 100)
        axes.grid(True, alpha=0.3)
        if index % columns == 0:
            axes.set_ylabel(f"top-{k} accuracy (%)")
        if index >= len(relations) - columns:
            axes.set_xlabel(xlabel, fontsize=8)
    handles, names = axes_grid.flat[0].get_legend_handles_labels()
    figure.legend(handles, names, loc="lower center", ncol=min(len(names), 6), fontsize=7,
                  frameon=False)
    figure.suptitle(title.format(k=k) + (f"\n(shaded: the 95 % Wilson interval of {first_set}; "
                                         f"n: its questions per bucket)" if first_set else ""),
                    fontsize=10)
    figure.tight_layout(rect=(0, 0.045 / n_rows, 1, 1))
    with atomic_write(png_path, mode="wb") as handle:
        figure.savefig(handle, format="png", metadata={"Software": None})
    return [png_path, csv_path]
