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


def publish_table_artifact(key: str, header: Sequence[str], rows: Sequence[Sequence[object]],
                           description: str) -> None:
    """Publish a table as a Prefect artifact (a no-op, logged, outside a Prefect run)."""
    from prefect.artifacts import create_table_artifact
    from prefect.context import get_run_context

    try:
        get_run_context()
    except Exception:
        log.debug("not in a Prefect run: artifact %s not published", key)
        return
    table = [dict(zip(header, (str(v) for v in row), strict=True)) for row in rows]
    create_table_artifact(key=key, table=table, description=description)
