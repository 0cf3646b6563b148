"""Helpers shared by the benchmarks: for the orchestration ones (``bench_prefect_overhead.py``,
``bench_cached_rerun.py``): isolated paths and Prefect home, the ephemeral API, and reading back
what Prefect recorded about a run (task runs and their states, subflow runs, durations); for
the training ones a random BERT of the MLM shape."""

from __future__ import annotations

import atexit
import os
import platform
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parents[1]
PATH_KEYS = ("data", "results", "metrics", "plots", "reports", "state")


def path_overrides(root: Path) -> dict[str, str]:
    """``--set`` overrides that move every ``paths.*`` inside ``root``."""
    return {f"paths.{name}": str(root / name) for name in PATH_KEYS}


def bench_params(root: Path, profile: str, overrides: dict[str, Any] | None = None):
    """The profile's params with every ``paths.*`` inside ``root`` (as the smoke tests do)."""
    from tasks.params_loading import load_params

    return load_params(PROJECT_ROOT / "params.yaml", profile=profile,
                       overrides={**(overrides or {}), **path_overrides(root)})


def parse_sets(items: list[str]) -> dict[str, Any]:
    """``["a.b=1"]`` -> ``{"a.b": 1}`` (values parsed as YAML, like ``qastress --set``)."""
    import yaml

    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"--set expects KEY=VALUE, got {item!r}")
        out[key.strip()] = yaml.safe_load(value)
    return out


def add_common_arguments(parser: Any, profile_help: str, sets_help: str | None = None,
                         keep_help: str = "keep the temp directory") -> None:
    """``--profile`` (default demo), ``--set KEY=VALUE`` (when ``sets_help`` is given),
    ``--workdir`` and ``--keep``: the options every orchestration benchmark takes."""
    parser.add_argument("--profile", default="demo", help=profile_help)
    if sets_help is not None:
        parser.add_argument("--set", dest="sets", action="append", default=[],
                            metavar="KEY=VALUE", help=sets_help)
    parser.add_argument("--workdir", type=Path,
                        help="parent of the temp directory (default: the system temp dir)")
    parser.add_argument("--keep", action="store_true", help=keep_help)


def isolated_workdir(prefix: str, parent: Path | None, keep: bool) -> Path:
    """A fresh temp directory with its own ``PREFECT_HOME`` (a new SQLite database, not shared
    with other jobs), set before Prefect is imported; removed at exit unless ``keep``."""
    sys.path.insert(0, str(PROJECT_ROOT))
    work = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    os.environ["PREFECT_HOME"] = str(work / "prefect-home")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "300")  # migrations
    os.environ.pop("PREFECT_API_URL", None)
    if not keep:  # registered first, so it runs after the API server's own exit handler
        atexit.register(shutil.rmtree, work, ignore_errors=True)
    import tasks  # noqa: F401  (offline/telemetry environment before Prefect is imported)

    return work


def start_prefect_api() -> tuple[float, str]:
    """Start the ephemeral Prefect API (once per process); seconds it took and its URL."""
    from prefect.client.orchestration import get_client

    start = time.perf_counter()
    with get_client(sync_client=True) as client:
        client.hello()
        url = str(client.api_url)
    return time.perf_counter() - start, url.rstrip("/")


def flow_run_tree(client, root_id) -> list:
    """The flow run ``root_id`` and every (sub)flow run under it."""
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterParentFlowRunId

    runs, frontier = [client.read_flow_run(root_id)], [root_id]
    while frontier:
        children = client.read_flow_runs(flow_run_filter=FlowRunFilter(
            parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=frontier)))
        runs.extend(children)
        frontier = [run.id for run in children]
    return runs


@dataclass(frozen=True, order=True)
class TaskRunRecord:
    """One task run as the Prefect API recorded it."""

    flow: str      # name of the (sub)flow it ran in
    task: str      # task run name without its ``-<suffix>``
    state: str     # final state name: Completed, Cached, Failed, ...
    seconds: float  # start to end (0.0 when either is missing, e.g. a cache hit)


def task_runs(flow_run_id, settle_s: float = 60.0) -> tuple[list[TaskRunRecord], int]:
    """Every task run of the flow run and its subflow runs, and the number of flow runs.

    The placeholder task runs that stand for subflows in their parent are left out. Prefect 3
    records task runs from events, asynchronously: polls until two reads agree (or ``settle_s``).
    """
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter

    def read() -> tuple[list[TaskRunRecord], int]:
        with get_client(sync_client=True) as client:
            flows = flow_run_tree(client, flow_run_id)
            placeholders = {run.parent_task_run_id for run in flows}
            flow_names = {f.id: f.name for f in client.read_flows()}
            records: list[TaskRunRecord] = []
            page = 200
            for run in flows:
                offset = 0
                while True:
                    batch = client.read_task_runs(
                        flow_run_filter=FlowRunFilter(id={"any_": [run.id]}), limit=page,
                        offset=offset)
                    records.extend(TaskRunRecord(
                        flow_names.get(run.flow_id, "?"), t.name.rsplit("-", 1)[0],
                        t.state.name if t.state else "?",
                        (t.end_time - t.start_time).total_seconds()
                        if t.start_time and t.end_time else 0.0)
                        for t in batch if t.id not in placeholders)
                    if len(batch) < page:
                        break
                    offset += page
        return sorted(records), len(flows)

    deadline = time.monotonic() + settle_s
    previous = read()
    while time.monotonic() < deadline:
        time.sleep(2.0)
        current = read()
        if current == previous and all(r.state not in ("Pending", "Running", "?")
                                       for r in current[0]):
            return current
        previous = current
    return previous


def flow_durations(flow_run_id) -> dict[str, float]:
    """Seconds from start to end of each (sub)flow run of the tree, summed by flow name."""
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        names = {f.id: f.name for f in client.read_flows()}
        seconds: dict[str, float] = {}
        for run in flow_run_tree(client, flow_run_id):
            if run.start_time and run.end_time:
                name = names.get(run.flow_id, "?")
                seconds[name] = (seconds.get(name, 0.0)
                                 + (run.end_time - run.start_time).total_seconds())
    return seconds


def run_study(params) -> tuple[float, Any]:
    """``study(params=...)`` inside ``run_settings(paths.state)``, as ``qastress run`` does:
    wall seconds and final state (exits when the run did not complete)."""
    from flows.study import study  # looked up at run time: whatever subflows it calls now
    from tasks.orchestration import run_settings

    with run_settings(params.paths.state):
        start = time.perf_counter()
        state = study(params=params, return_state=True)
        seconds = time.perf_counter() - start
    if not state.is_completed():
        raise SystemExit(f"the study run did not complete: {state}")
    return seconds, state


def machine() -> str:
    """One line on the machine and the library versions that matter for the timings."""
    import torch

    try:
        import prefect

        prefect_version = prefect.__version__
    except ImportError:  # a GPU machine with only the libraries a benchmark needs
        prefect_version = "not installed"
    gpu = f", {torch.cuda.get_device_name()}" if torch.cuda.is_available() else ""
    return (f"{platform.platform()}, {os.cpu_count()} CPUs{gpu}, python "
            f"{platform.python_version()}, torch {torch.__version__} "
            f"({torch.get_num_threads()} threads), prefect {prefect_version}")


def load() -> str:
    """The 1/5/15-minute load averages, e.g. ``0.52/0.40/0.31``."""
    return "/".join(f"{v:.2f}" for v in os.getloadavg())


def mlm_shaped_bert(mlm: Any, vocab_size: int = 30522) -> Any:
    """A randomly initialised ``BertModel`` of the shape of ``mlm``
    (``params.retriever_training.mlm``: the small BERT the demo's DPR pair starts from)."""
    from transformers import BertConfig, BertModel

    return BertModel(BertConfig(vocab_size=vocab_size, hidden_size=mlm.hidden,
                                num_hidden_layers=mlm.layers, num_attention_heads=mlm.heads,
                                intermediate_size=mlm.intermediate,
                                max_position_embeddings=max(512, mlm.max_length)))
