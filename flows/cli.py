"""The ``qastress`` command: run the study or one of its flows, fetch real data, show params.

Heavy libraries (Prefect, torch, Pyserini) are imported inside the commands that need them, so
``qastress --help`` answers at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from flows._cli_params import load_params_or_exit
from flows.cli_checks import check_scores, dag_app, findings
from flows.cli_eval import eval_app
from tasks.pipeline.stages import STAGES, flows_by_command

app = typer.Typer(
    help="qastress: stress-test QA systems. EntityQuestions retrieval (BM25 vs dense) and "
         "paraphrased-question robustness, as one Prefect + DVC pipeline. Runs offline on the "
         "embedded synthetic demo world by default.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)
data_app = typer.Typer(help="Real datasets: list them and download them (needs internet).",
                       no_args_is_help=True)
app.add_typer(data_app, name="data")
server_app = typer.Typer(
    help="A local Prefect server (UI + API) for the study's runs: up, status, down. It binds to "
         "orchestration.server.host (127.0.0.1) and keeps its database under paths.state/prefect.",
    no_args_is_help=True)
app.add_typer(server_app, name="server")
app.add_typer(eval_app, name="eval")

#: ``qastress stage`` names -> (module, flow): the study, then the stages of the registry.
FLOWS = flows_by_command()

ProfileOpt = Annotated[str | None, typer.Option(
    "--profile", "-p", help="smoke (seconds), demo (default main job), demo-large (the demo "
    "world at 5.3x: 51,770 passages) or real (fetched data); default: $QASTRESS_PROFILE, then "
    "params.yaml's `profile`.")]
ParamsOpt = Annotated[Path | None, typer.Option(
    "--params", help="The params file (default: $QASTRESS_PARAMS or ./params.yaml).")]
SetOpt = Annotated[list[str] | None, typer.Option(
    "--set", "-S", help="Override one parameter, e.g. --set retrieval.bm25.k1=1.2 "
    "(values parsed as YAML; repeatable).")]


def parse_overrides(items: list[str] | None) -> dict[str, Any]:
    """``["a.b=1", "c=x"]`` -> ``{"a.b": 1, "c": "x"}`` (values parsed as YAML)."""
    import yaml

    overrides: dict[str, Any] = {}
    for item in items or []:
        key, value = split_key_value(item, "--set")
        try:
            overrides[key] = yaml.safe_load(value)
        except yaml.YAMLError as exc:
            problem = getattr(exc, "problem", None) or str(exc).replace("\n", " ")
            raise typer.BadParameter(f"{key}: value {value!r} is not valid YAML ({problem})",
                                     param_hint="--set") from None
        except RecursionError:
            raise typer.BadParameter(f"{key}: value nested deeper than the YAML parser follows",
                                     param_hint="--set") from None
    return overrides


def split_key_value(item: str, option: str) -> tuple[str, str]:
    """``"a.b=1"`` -> ``("a.b", "1")`` (the key stripped); no ``=`` or no key is a usage
    error of ``option``."""
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise typer.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint=option)
    return key.strip(), value


def run_flow(name: str, profile: str | None, params_file: Path | None,
             overrides: dict[str, Any] | None = None, **flow_args: Any) -> Any:
    """Load the params, then run one flow (with ``flow_args`` besides the params) with its
    results persisted under ``paths.state``."""
    from tasks.orchestration import run_settings

    params = load_params_or_exit(params_file, profile, overrides)
    from flows._input_error_logs import input_errors_on_one_line
    from tasks.distribution import shared_api
    from tasks.io.errors import DataFormatError, MissingInputError
    from tasks.server import run_api_url
    from tasks.temporary_api import ApiStartError

    api_url = run_api_url(params)
    orchestration = params.orchestration.model_copy(update={"api_url": api_url})
    flow_fn = load_flow(name)
    try:
        with (run_settings(params.paths.state), shared_api(orchestration) as url,
              input_errors_on_one_line()):
            typer.echo(f"Prefect API: {url}{'' if api_url else ' (temporary, for this run)'} "
                       "(`qastress server up` keeps runs for the UI)", err=True)
            return flow_fn(params=params, **flow_args)
    except ApiStartError as exc:
        typer.secho(f"Prefect API: {exc}", fg="red", err=True)
        raise typer.Exit(3) from None
    except (MissingInputError, DataFormatError) as exc:  # they say what is wrong and how to fix it
        typer.secho(f"error: {exc}", fg="red", err=True)
        raise typer.Exit(2) from None


def load_flow(name: str) -> Any:
    """The Prefect flow object of ``FLOWS[name]``."""
    import importlib

    module, attr = FLOWS[name]
    return getattr(importlib.import_module(module), attr)


UntilOpt = Annotated[list[str] | None, typer.Option(
    "--until", "-u", help="Run only this stage and the stages it reads from, directly or not, "
    "as `dvc repro STAGE` would, e.g. --until retrieval (repeatable; a stage's name as in "
    "dvc.yaml, train_retriever, or as `qastress stage` takes it, train-retriever). Default: "
    "every stage.")]


@app.command()
def run(profile: ProfileOpt = None, params: ParamsOpt = None, set_: SetOpt = None,
        until: UntilOpt = None) -> None:
    """Run the whole study (the main job) and print where its results are."""
    names = [one.name for one in STAGES]
    targets = [target.replace("-", "_") for target in until or []]
    for target, given in zip(targets, until or [], strict=True):
        if target not in names:
            raise typer.BadParameter(f"unknown stage {given!r}; expected one of {names}",
                                     param_hint="--until")
    run_flow("study", profile, params, parse_overrides(set_), until=targets or None)


@app.command()
def stage(
    name: Annotated[str, typer.Argument(help=f"One of: {', '.join(n for n in FLOWS)}.")],
    profile: ProfileOpt = None, params: ParamsOpt = None, set_: SetOpt = None,
) -> None:
    """Run one flow of the DAG (what each `dvc.yaml` stage calls; `demo_world`, its dvc.yaml
    name, works too)."""
    name = name.replace("_", "-")
    if name not in FLOWS:
        raise typer.BadParameter(f"unknown flow {name!r}; expected one of {list(FLOWS)}")
    run_flow(name, profile, params, parse_overrides(set_))


@app.command("params")
def show_params(profile: ProfileOpt = None, params: ParamsOpt = None,
                set_: SetOpt = None) -> None:
    """Print the resolved, validated parameters of a profile as YAML."""
    import yaml

    resolved = load_params_or_exit(params, profile, parse_overrides(set_))
    typer.echo(yaml.safe_dump(resolved.model_dump(mode="json"), sort_keys=False))


@app.command("dpr-pair")
def dpr_pair(
    question_model: Annotated[str, typer.Argument(
        help="A DPR question encoder: a local directory or a cached hub name, e.g. "
        "facebook/dpr-question_encoder-single-nq-base.")],
    ctx_model: Annotated[str, typer.Argument(
        help="Its DPR context encoder, e.g. facebook/dpr-ctx_encoder-single-nq-base.")],
    out_dir: Annotated[Path, typer.Argument(help="Where the pair directory goes.")],
    max_length: Annotated[int, typer.Option(
        help="Tokens per question or passage, recorded for the pair (DPR: 256).")] = 256,
) -> None:
    """Save two released DPR checkpoints as one retriever directory (`question_encoder/` +
    `ctx_encoder/`), the form fine-tuning starts from.

    Register it, e.g. `--set 'retrieval.dense_retrievers.dpr-released={model:
    <out_dir>/question_encoder, ctx_model: <out_dir>/ctx_encoder, prebuilt_index:
    wikipedia-dpr-100w.dpr-single-nq}'`, and fine-tune it as the paper did with `--set
    retriever_experiments.baseline=dpr-released`: onlyQ fine-tunes then search the prebuilt
    index, with nothing encoded.
    """
    from models.retriever.export import assemble_dpr_pair
    from tasks.retrieval.encoder_spec import resolve_model_path

    try:
        typer.echo(assemble_dpr_pair(resolve_model_path(question_model),
                                     resolve_model_path(ctx_model), out_dir, max_length))
    except (ValueError, FileNotFoundError) as exc:
        typer.secho(f"error: {exc}", fg="red", err=True)
        raise typer.Exit(2) from None


@data_app.command("list")
def data_list() -> None:
    """List the real datasets that `qastress data fetch` knows."""
    from rich.console import Console
    from rich.table import Table

    from tasks.fetch import list_sources

    table = Table("source", "description", "files", "approx. size", "fetched into")
    for source in list_sources():
        table.add_row(str(source["name"]), str(source["description"]),
                      str(len(source["files"])), str(source.get("size", "?")),
                      f"raw/{source['dir']}/")
    Console().print(table)


@data_app.command("fetch")
def data_fetch(
    source: Annotated[str, typer.Argument(help="A source name from `qastress data list`.")],
    data_root: Annotated[Path, typer.Option(
        help="The data root (paths.data): files land in `<data-root>/raw/<dir>/`, `<dir>` the "
    "source's \"fetched into\" in `qastress data list` (e.g. wikipedia/ for dpr-wikipedia)."),
    ] = Path("data"),
    base_url: Annotated[str | None, typer.Option(
        help="Fetch from this mirror instead of the registered hosts.")] = None,
    keep_archives: Annotated[bool, typer.Option(
        "--keep-archives/--drop-archives",
        help="Keep a downloaded archive after unpacking it, or delete it (e.g. the 56 GB "
        "tarball of pyserini-dpr-nq beside its 65 GB of files); a marker file remembers "
        "that it was unpacked either way.")] = True,
    option: Annotated[list[str] | None, typer.Option(
        "--option", "-o", metavar="KEY=VALUE",
        help="A source option (repeat it), e.g. `-o size=xl` for ppdb (the real profile's "
        "ppdb-2.0-xl-all); `qastress data list` names each source's options.")] = None,
) -> None:
    """Download a real dataset with resume, checksum (sha256, or the md5 a publisher gives)
    and atomic rename; unpack archives. An unknown source or option exits 2, a failed
    download 1, each with one line."""
    from tasks.fetch import fetch_source
    from tasks.fetch_download import FetchError
    from tasks.fetch_sources import UnknownSource

    options = {key: value.strip() for key, value in
               (split_key_value(item, "--option") for item in option or [])}
    try:
        paths = fetch_source(source, data_root, base_url=base_url, progress=True,
                             options=options, keep_archives=keep_archives)
    except (UnknownSource, ValueError) as exc:
        typer.secho(f"error: {exc}", fg="red", err=True)
        raise typer.Exit(2) from None
    except (FetchError, OSError) as exc:
        typer.secho(f"error: {exc}", fg="red", err=True)
        raise typer.Exit(1) from None
    for path in paths:
        typer.echo(path)


HostOpt = Annotated[str | None, typer.Option(
    help="The server's address: where `server up` binds it and the others look for it "
    "(default orchestration.server.host, 127.0.0.1).")]
PortOpt = Annotated[int | None, typer.Option(
    min=1, max=65535, help="The server's port (default orchestration.server.port, 4200).")]


def _server(profile: str | None, params_file: Path | None, host: str | None = None,
            port: int | None = None) -> Any:
    from tasks.server import server_info

    params = load_params_or_exit(params_file, profile)
    return server_info(params, host=host, port=port)


@server_app.command("up")
def server_up(profile: ProfileOpt = None, params: ParamsOpt = None, host: HostOpt = None,
              port: PortOpt = None) -> None:
    """Start the Prefect server in the background and wait until its API answers."""
    from tasks.server import start_server

    info = start_server(_server(profile, params, host, port))
    typer.echo(f"Prefect UI:  {info.url}\nPrefect API: {info.api_url}\n"
               f"database and log: {info.home}\n"
               f"`qastress run` reports here while it runs; for the prefect CLI:\n"
               f"  export PREFECT_API_URL={info.api_url}")


@server_app.command("status")
def server_status(profile: ProfileOpt = None, params: ParamsOpt = None, host: HostOpt = None,
                  port: PortOpt = None) -> None:
    """Say whether the server answers (exit code 1 when it does not)."""
    from tasks.server import is_healthy

    info = _server(profile, params, host, port)
    if is_healthy(info.api_url):
        typer.echo(f"up: {info.url} (API {info.api_url})")
        return
    typer.echo(f"down: nothing answers at {info.api_url}")
    raise typer.Exit(1)


@server_app.command("down")
def server_down(profile: ProfileOpt = None, params: ParamsOpt = None, host: HostOpt = None,
                port: PortOpt = None) -> None:
    """Stop the background server of this project."""
    from tasks.server import stop_server

    info = _server(profile, params, host, port)
    typer.echo("stopped" if stop_server(info) else f"no server was answering at {info.url}")


def served_deployments(profile: str | None, params_file: Path | None,
                       name: str = "local") -> list[Any]:
    """One deployment per flow of :data:`FLOWS`, for ``flow.serve``-style serving."""
    parameters: dict[str, Any] = {
        "profile": profile, "params_file": str(params_file.resolve()) if params_file else None}
    return [load_flow(flow).to_deployment(
        name=name, parameters={k: v for k, v in parameters.items() if v is not None},
        description=f"qastress {flow} (served by `qastress serve`)", tags=["qastress"])
        for flow in FLOWS]


@app.command()
def serve(profile: ProfileOpt = None, params: ParamsOpt = None) -> None:
    """Serve every flow as a deployment `<flow>/local` from this process (flow.serve).

    Needs a Prefect API (`qastress server up`); then trigger runs from the UI or with
    `prefect deployment run 'study/local'`. Stops with Ctrl-C.
    """
    import os

    from prefect import serve as prefect_serve

    from tasks.server import run_api_url

    resolved = load_params_or_exit(params, profile)
    api_url = run_api_url(resolved)
    if not api_url:
        typer.secho("no Prefect server answers: start one with `qastress server up` "
                    "(or set PREFECT_API_URL)", fg="red", err=True)
        raise typer.Exit(2)
    os.environ["PREFECT_API_URL"] = api_url
    state = resolved.paths.state.resolve()
    os.environ["PREFECT_LOCAL_STORAGE_PATH"] = str(state / "results")  # the runs' task cache
    os.environ["PREFECT_RESULTS_PERSIST_BY_DEFAULT"] = "true"
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings(updates={PREFECT_API_URL: api_url}):
        prefect_serve(*served_deployments(profile, params))


app.command("check-scores")(check_scores)
app.command("findings")(findings)
app.add_typer(dag_app, name="dag")


def main_for(name: str, prog: str | None = None) -> None:
    """``python -m flows.<module>``: run the flow ``name`` with ``--profile``/``--params``/
    ``--set``, as ``qastress stage name`` does; ``--help`` shows that module's usage (``prog``,
    default ``python -m <module>``) and the first paragraph of its docstring."""
    name = name.replace("_", "-")
    module = FLOWS[name][0]
    one = typer.Typer(pretty_exceptions_enable=False, add_completion=False)

    @one.command(help=f"{module_summary(module)}\n\nThe `{name}` stage of the DAG: the same "
                      f"as `qastress stage {name}`.")
    def run_one(profile: ProfileOpt = None, params: ParamsOpt = None,
                set_: SetOpt = None) -> None:
        run_flow(name, profile, params, parse_overrides(set_))

    one(prog_name=prog or f"python -m {module}")


def module_summary(module: str) -> str:
    """The first paragraph of ``module``'s docstring, read from its source (not imported)."""
    import ast
    import importlib.util

    spec = importlib.util.find_spec(module)
    source = Path(spec.origin).read_text(encoding="utf-8") if spec and spec.origin else ""
    return (ast.get_docstring(ast.parse(source)) or "").split("\n\n")[0].strip()


if __name__ == "__main__":
    app()
