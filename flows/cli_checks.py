"""``qastress dag write|check``, ``qastress check-scores`` and ``qastress findings``: the
generated DAG files and the expected scores, both checked against their single source, and the
papers' findings of a run or of the pinned scores.

Imported by :mod:`flows.cli`; heavy libraries are imported inside the commands.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def default_root() -> Path:
    """The repository of this code when it runs from a checkout (an editable install), else
    the working directory: an installed copy (``pip install .``, the Docker images) lives in
    site-packages, away from dvc.yaml, so run it in the repository."""
    return PROJECT_ROOT if (PROJECT_ROOT / "pyproject.toml").is_file() else Path.cwd()


dag_app = typer.Typer(
    help="dvc.yaml and prefect.yaml, generated from the stage registry "
         "(tasks/pipeline/stages.py): write them, or check that the committed ones are current.",
    no_args_is_help=True)

RootOpt = Annotated[Path | None, typer.Option(
    help="The repository root holding dvc.yaml, prefect.yaml and the sources (default: this "
         "checkout; for an installed copy, the working directory).")]


def _dag_root(root: Path | None) -> Path:
    """``root`` (or :func:`default_root`) when it holds the project's sources; else one line
    and exit 2 (the DAG files are generated from what ``flows/`` imports)."""
    chosen = root or default_root()
    if not (chosen / "flows" / "study.py").is_file():
        typer.secho(f"error: {chosen}: not a qastress checkout (no flows/study.py); run in the "
                    "repository or pass --root REPO", fg="red", err=True)
        raise typer.Exit(2)
    return chosen


@dag_app.command("write")
def dag_write(root: RootOpt = None) -> None:
    """Regenerate dvc.yaml and prefect.yaml from the registry (after adding a stage, or
    changing what a flow imports)."""
    from tasks.pipeline.dag_files import DAG_FILES, write_dag_files

    changed = write_dag_files(_dag_root(root))
    for name in DAG_FILES:
        typer.echo(f"{name}: {'written' if name in changed else 'unchanged'}")


@dag_app.command("check")
def dag_check(root: RootOpt = None) -> None:
    """Exit 1 (and print the difference) when dvc.yaml or prefect.yaml differ from the registry."""
    from tasks.pipeline.dag_files import DAG_FILES, stale_dag_files

    stale = stale_dag_files(_dag_root(root))
    for name in DAG_FILES:
        typer.echo(f"{name}: {'STALE' if name in stale else 'current'}")
    if stale:
        for diff in stale.values():
            typer.echo(diff, err=True)
        typer.secho("run `qastress dag write` and commit the result", fg="red", err=True)
        raise typer.Exit(1)


#: Options of the commands that read a run's metrics and the expected scores.
ScoresProfileOpt = Annotated[str | None, typer.Option(
    "--profile", "-p", help="Whose metrics and expected scores (smoke | demo | demo-large | "
    "real); default: $QASTRESS_PROFILE, then params.yaml's `profile`.")]
ScoresParamsOpt = Annotated[Path | None, typer.Option(
    "--params", help="The params file (default: $QASTRESS_PARAMS or ./params.yaml).")]
MetricsOpt = Annotated[Path | None, typer.Option(
    help="The metrics directory (default: the profile's paths.metrics).")]


def _cpu_measured(cpu: str) -> str:
    """This machine's CPU for a variant file's header: model name, family/model and ISA."""
    from tasks.pipeline.machine_speed import cpu_identity

    identity = cpu_identity()
    return f"{cpu} ({identity['cpu_id'] or 'no cpuinfo'}; ISA {' '.join(identity['isa']) or '-'})"


def check_scores(
    profile: ScoresProfileOpt = None,
    params: ScoresParamsOpt = None,
    metrics: MetricsOpt = None,
    expected: Annotated[Path | None, typer.Option(
        help="The expected-scores file (default: `tasks/scores/expected/<profile>.yaml`).")] = None,
    update: Annotated[bool, typer.Option(
        "--update", help="Write the expected file from the metrics (a deliberate change of "
        "the expected numbers; tolerances and ignored keys are kept).")] = False,
    show_all: Annotated[bool, typer.Option(
        "--all", help="List every number, not only those that are not equal.")] = False,
    machine: Annotated[str | None, typer.Option(
        "--machine", help="The CPU model name whose machine variant of the expected file "
        "applies (`<profile>@<name>.yaml` beside it, matched by its `machine` glob); default: "
        "this machine's (/proc/cpuinfo). `--machine none` checks the base file alone.")] = None,
) -> None:
    """Compare metrics/*.json with the profile's expected scores: each number is equal, within
    tolerance or regressed (either way); missing and new numbers are listed. Exit 1 unless all
    are equal or within tolerance.

    Trainings round differently on another CPU family: where a machine variant of the expected
    file matches this machine's CPU, its numbers replace the base file's, and `--update` rewrites
    the variant (the numbers this run gives differently from the base) and not the base.

    Each file records the package versions it was pinned with (`--update` writes those
    installed now); the check says where this environment's differ (`constraints.txt` holds
    the environment of the packaged pins)."""
    from flows._cli_params import load_params_or_exit
    from tasks.pipeline.machine_speed import cpu_model
    from tasks.scores.compare import compare, passed, render_findings
    from tasks.scores.environment import (
        describe_drift,
        installed_versions,
        recorded_versions,
    )
    from tasks.scores.expected import (
        ExpectedScoresError,
        expected_path,
        load_expected,
        updated_expected,
        write_expected,
    )
    from tasks.scores.machine_variants import (
        updated_variant,
        variant_for,
        with_variant,
        write_variant,
    )
    from tasks.scores.metrics import MetricsError, read_metrics

    resolved = load_params_or_exit(params, profile)
    path = expected or expected_path(resolved.profile)
    update_command = (f"qastress check-scores --profile {resolved.profile}"
                      + (f" --expected {expected}" if expected else "") + " --update")
    metrics_dir = metrics or resolved.paths.metrics
    cpu = cpu_model() if machine is None else machine
    try:
        actual = read_metrics(metrics_dir)
        previous = load_expected(path) if path.is_file() else None
        variant = (variant_for(path, cpu) if previous is not None and cpu != "none"
                   else None)
        if update and variant is not None:
            typer.echo(render_findings(compare(with_variant(previous, variant), actual),
                                       show_all=show_all))
            variant = updated_variant(previous, variant, actual, recorded_versions())
            write_variant(variant, cpu if machine is not None else _cpu_measured(cpu),
                          previous.packages)
            typer.echo(f"updated {variant.path} from {metrics_dir}: the machine variant for CPUs "
                       f"matching {variant.machine!r}, {len(variant.scores)} numbers that differ "
                       f"from {path.name}; {path.name} (pinned on another machine) is unchanged")
            return
    except (MetricsError, ExpectedScoresError) as exc:
        typer.secho(str(exc), fg="red", err=True)
        raise typer.Exit(2) from None
    if update:
        if previous is not None:
            typer.echo(render_findings(compare(previous, actual), show_all=show_all))
        write_expected(path, updated_expected(actual, resolved.profile, previous,
                                              recorded_versions()))
        typer.echo(f"updated {path} from {metrics_dir} ({len(actual)} numbers)")
        return
    if previous is None:
        typer.secho(f"{path}: no expected scores for profile {resolved.profile!r}; after a "
                    f"{resolved.profile} run, create them with `{update_command}`", fg="red",
                    err=True)
        raise typer.Exit(2)
    pinned_with = [(path.name, previous.packages)]
    if variant is not None:
        pinned_with.append((variant.path.name, variant.packages))
        try:
            previous = with_variant(previous, variant)
        except ExpectedScoresError as exc:
            typer.secho(str(exc), fg="red", err=True)
            raise typer.Exit(2) from None
    findings = compare(previous, actual)
    typer.echo(f"{metrics_dir} vs {path}" + (
        f" with its machine variant {variant.path.name} ({len(variant.scores)} numbers; CPU "
        f"{cpu!r} matches {variant.machine!r})" if variant is not None else ""))
    typer.echo(render_findings(findings, show_all=show_all))
    for source, packages in pinned_with:
        typer.echo(describe_drift(source, packages, installed_versions(packages)))
    if not passed(findings):
        typer.secho("scores differ from the expected ones: fix the regression, or update the "
                    f"file deliberately with `{update_command}`", fg="red", err=True)
        raise typer.Exit(1)


def findings(
    profile: ScoresProfileOpt = None,
    params: ScoresParamsOpt = None,
    metrics: MetricsOpt = None,
    pinned: Annotated[bool, typer.Option(
        "--pinned", help="Read the numbers pinned in the profile's expected scores "
        "(`tasks/scores/expected/<profile>.yaml`, with the machine variant) instead of a "
        "run's metrics.")] = False,
    machine: Annotated[str | None, typer.Option(
        "--machine", help="With --pinned: the CPU model name whose machine variant applies; "
        "default: this machine's; `none`: the base file alone.")] = None,
) -> None:
    """Print the papers' findings as a Markdown table: each claim with the numbers, their
    paired bootstrap CIs and a verdict by the rule of `tasks/reporting/findings.py` (the
    table at the top of the report). A finding whose metrics are missing names the stage to
    run."""
    from flows._cli_params import load_params_or_exit
    from tasks.pipeline.machine_speed import cpu_model
    from tasks.reporting.findings import (
        METRICS,
        findings_from_metrics,
        findings_markdown,
        metrics_from_scores,
        study_findings,
    )
    from tasks.scores.expected import ExpectedScoresError, expected_path, load_expected
    from tasks.scores.machine_variants import expected_on

    resolved = load_params_or_exit(params, profile)
    try:
        if pinned:
            path = expected_path(resolved.profile)
            cpu = cpu_model() if machine is None else machine
            scores = dict((load_expected(path) if cpu == "none" else expected_on(path, cpu))
                          .scores)
            found = findings_from_metrics(metrics_from_scores(scores))
            measured_on = f"pinned ({path.name}" + ("" if cpu == "none" else f", CPU {cpu}") + ")"
        else:
            metrics_dir = metrics or resolved.paths.metrics
            if not metrics_dir.is_dir():
                raise ExpectedScoresError(f"{metrics_dir}: no metrics directory; run the study "
                                          "first (`qastress run`), or use --pinned")
            found = study_findings({name: metrics_dir / file for name, file in METRICS.items()})
            measured_on = f"this run ({metrics_dir})"
    except (OSError, ValueError) as exc:
        typer.secho(f"error: {exc}", fg="red", err=True)
        raise typer.Exit(2) from None
    typer.echo(findings_markdown(found, measured_on), nl=False)
