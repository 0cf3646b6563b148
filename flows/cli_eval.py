"""``qastress eval``: score any model's outputs with the project's metrics (SQuAD v1.1 EM/F1,
top-k retrieval accuracy), as the official scripts do."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

eval_app = typer.Typer(help="Score predictions of any model with the project's metrics.",
                       no_args_is_help=True)


@eval_app.command("squad")
def eval_squad(
    data: Annotated[Path, typer.Argument(help="A SQuAD v1.1 file (gold answers).")],
    predictions: Annotated[Path, typer.Argument(help="Predictions JSON {id: answer text}.")],
) -> None:
    """EM/F1 of the official SQuAD v1.1 script; missing ids are listed (they score 0)."""
    import json
    import logging

    from tasks.io.errors import DataFormatError
    from tasks.reading.scoring import score_prediction_file

    # The official script's line per unanswered id is summed up below (all ids in the JSON).
    per_id_log = logging.getLogger("tasks.evaluation.squad_metrics")
    level = per_id_log.level
    per_id_log.setLevel(logging.ERROR)
    try:
        report = score_prediction_file(data, predictions)
    except (DataFormatError, OSError) as exc:
        typer.secho(f"error: {exc}", fg="red", err=True)
        raise typer.Exit(2) from None
    finally:
        per_id_log.setLevel(level)
    missing, extra = report.missing_ids, report.extra_ids

    def first_ids(ids: Sequence[str], key: str) -> str:
        more = f", ... ({len(ids) - 20} more; all in the JSON's {key})" if len(ids) > 20 else ""
        return ", ".join(ids[:20]) + more

    if missing:
        typer.echo(f"{len(missing)} of {report.n_questions} questions have no prediction "
                   f"(scored 0): {first_ids(missing, 'missing_ids')}", err=True)
    if extra:
        has = "predictions have ids" if len(extra) > 1 else "prediction has an id"
        typer.echo(f"{len(extra)} {has} not in {data} (ignored): "
                   f"{first_ids(extra, 'extra_ids')}", err=True)
    if len(missing) == report.n_questions:
        typer.secho(f"warning: no prediction of {predictions} answers a question of {data}: "
                    "predictions of another dataset?", fg="yellow", err=True)
    typer.echo(json.dumps(report.as_dict()))


@eval_app.command("retrieval")
def eval_retrieval(
    results: Annotated[list[Path], typer.Argument(
        help="Retrieval-result files (DPR / EntityQuestions JSON: question, answers, ctxs in "
        "rank order), or directories of them (their `*.json`). Each file is one relation.")],
    k: Annotated[list[int] | None, typer.Option(
        "--top", "-k", min=1, metavar="K",
        help="Cut-offs (repeatable; default 1, 5, 20, 100).")] = None,
    mode: Annotated[str, typer.Option(
        help="`stored`: the files' own has_answer flags (as EntityQuestions' accuracy.py); "
        "or judge the passages again: eq-string (the EntityQuestions tables), eq-string-title, "
        "dpr-string, dpr-string-title (DPR's qa_validation), title, regex.")] = "stored",
) -> None:
    """Top-k retrieval accuracy (%) of any retriever's result files: per file and the macro
    average over files. The table of EntityQuestions' accuracy.py goes to stderr, one JSON
    object to stdout."""
    import json

    from tasks.evaluation.result_files import (
        accuracy_table,
        score_result_files,
        short_rankings,
    )
    from tasks.io.errors import DataFormatError

    try:
        report = score_result_files(results, k or [1, 5, 20, 100], mode)
    except (DataFormatError, OSError, ValueError) as exc:
        typer.secho(f"error: {exc}", fg="red", err=True)
        raise typer.Exit(2) from None
    typer.echo(accuracy_table(report), err=True, nl=False)
    for note in short_rankings(report):
        typer.secho(f"note: {note}", fg="yellow", err=True)
    for folder in (path for path in results if path.is_dir()):
        others = sorted(p.name for p in folder.iterdir() if p.is_file() and p.suffix != ".json")
        if others:
            typer.secho(f"note: {folder}: {len(others)} file(s) not *.json left out "
                        f"({', '.join(others[:3])}{', ...' if len(others) > 3 else ''})",
                        fg="yellow", err=True)
    typer.echo(json.dumps(report))
