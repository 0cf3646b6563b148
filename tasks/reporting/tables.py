"""Markdown tables of metrics, and their Prefect table artifacts."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

from tasks.io.atomic import write_text

log = logging.getLogger(__name__)


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub-flavoured Markdown table (numbers right-aligned)."""

    def cell(value: object) -> str:
        return f"{value:.1f}" if isinstance(value, float) else str(value).replace("|", r"\|")

    numeric = [bool(rows) and all(isinstance(r[i], int | float) for r in rows)
               for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def topk_rows(metrics: Mapping, ks: Sequence[int]) -> tuple[list[str], list[list[object]]]:
    """Header and rows (one per relation, then the macro average) of a top-k metrics dict."""
    header = ["relation", *[f"top-{k}" for k in ks]]
    rows: list[list[object]] = [
        [relation, *[acc[f"top{k}"] for k in ks]]
        for relation, acc in metrics["per_relation"].items()
    ]
    rows.append(["**macro average**", *[metrics["macro"][f"top{k}"] for k in ks]])
    return header, rows


def write_topk_report(metrics: Mapping, ks: Sequence[int], path: Path, title: str) -> str:
    """Write the top-k table as Markdown (with how it was measured) and return the text."""
    header, rows = topk_rows(metrics, ks)
    text = (f"# {title}\n\nRetriever: `{metrics['retriever']}`; {metrics['questions']} "
            f"questions; answer matching: `{metrics['has_answer_mode']}` (DPR simple tokenizer)."
            f"\nTop-k retrieval accuracy in percent.\n\n" + markdown_table(header, rows))
    write_text(path, text)
    return text


def in_prefect_run(key: str) -> bool:
    """Whether this code runs inside a Prefect flow or task run, where the artifact ``key``
    can be published; outside one (a test, a script) that is logged at debug level."""
    from prefect.context import get_run_context
    from prefect.exceptions import MissingContextError

    try:
        get_run_context()
    except MissingContextError:
        log.debug("not in a Prefect run: artifact %s not published", key)
        return False
    return True


def publish_table_artifact(key: str, header: Sequence[str], rows: Sequence[Sequence[object]],
                           description: str) -> None:
    """Publish a table as a Prefect artifact (a no-op, logged, outside a Prefect run)."""
    from prefect.artifacts import create_table_artifact

    if not in_prefect_run(key):
        return
    table = [dict(zip(header, (str(v) for v in row), strict=True)) for row in rows]
    create_table_artifact(key=key, table=table, description=description)


def publish_link_artifact(key: str, path: Path, description: str) -> None:
    """Publish a link to a local file (a figure, a report) as a Prefect artifact (a no-op,
    logged, outside a Prefect run)."""
    from prefect.artifacts import create_link_artifact

    if not in_prefect_run(key):
        return
    create_link_artifact(key=key, link=Path(path).resolve().as_uri(), link_text=Path(path).name,
                         description=description)


def publish_markdown_artifact(key: str, markdown: str, description: str) -> None:
    """Publish a Prefect markdown artifact (a no-op, logged, outside a Prefect run)."""
    from prefect.artifacts import create_markdown_artifact

    if not in_prefect_run(key):
        return
    create_markdown_artifact(key=key, markdown=markdown, description=description)


def retriever_rows(metrics_by_retriever: Mapping[str, Mapping],
                   ks: Sequence[int]) -> tuple[list[str], list[list[object]]]:
    """Header and rows (one per retriever) of the macro top-k accuracy of several retrievers."""
    header = ["retriever", *[f"top-{k}" for k in ks]]
    rows: list[list[object]] = [[name, *[m["macro"][f"top{k}"] for k in ks]]
                                for name, m in metrics_by_retriever.items()]
    return header, rows


def difference_rows(comparison: Mapping) -> tuple[list[str], list[list[object]]]:
    """Header and rows (one per pair) of a retriever comparison (see ``compare_retrievers``)."""
    k = comparison["k"]
    header = ["A", "B", f"top-{k} A", f"top-{k} B", "A - B (points)",
              f"{round(100 * comparison['confidence'])}% CI", "significant"]
    rows: list[list[object]] = []
    for pair in comparison["pairs"].values():
        rows.append([pair["a"], pair["b"], f"{comparison['accuracy'][pair['a']]:.2f}",
                     f"{comparison['accuracy'][pair['b']]:.2f}", f"{pair['difference']:+.2f}",
                     f"[{pair['ci_low']:+.2f}, {pair['ci_high']:+.2f}]",
                     "yes" if pair["significant"] else "no"])
    return header, rows


def write_comparison_report(metrics_by_retriever: Mapping[str, Mapping], comparison: Mapping,
                            ks: Sequence[int], path: Path, title: str,
                            notes: str = "") -> str:
    """Markdown: ``notes`` (what the retrievers are), macro top-k per retriever, then the
    pairwise differences with bootstrap CIs."""
    header, rows = retriever_rows(metrics_by_retriever, ks)
    diff_header, diff_rows = difference_rows(comparison)
    some = next(iter(metrics_by_retriever.values()))
    text = (f"# {title}\n\n{some['questions']} questions; answer matching: "
            f"`{some['has_answer_mode']}` (DPR simple tokenizer).\n\n"
            + (f"{notes.strip()}\n\n" if notes.strip() else "")
            + "## Top-k retrieval accuracy (macro average over relations, percent)\n\n"
            + markdown_table(header, rows)
            + f"\n## Differences at top-{comparison['k']}\n\nAccuracy over all "
            f"{comparison['questions']} questions (percent); paired bootstrap over questions "
            f"({comparison['n_bootstrap']} resamples, seed {comparison['seed']}), percentile "
            f"interval; significant when the interval excludes 0.\n\n"
            + markdown_table(diff_header, diff_rows))
    write_text(path, text)
    return text
