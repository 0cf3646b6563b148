"""A real Prefect server: `qastress server up`, flow runs and artifacts through its API,
`prefect.yaml` deployments run by a process worker, `qastress serve`, and the UI in Chromium.

One server for the module (a free loopback port, its database in a temp dir), smoke params
with every path in that temp dir. The demo-world flow is the workload: it is quick and it
publishes a table artifact.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from tasks.distribution import free_port

PROJECT_ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
POOL = "qastress-process"


def _run(args: list[str], env: dict[str, str], timeout: float = 300,
         cwd: Path = PROJECT_ROOT) -> subprocess.CompletedProcess:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)
    assert done.returncode == 0, f"{args} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`qastress server up` on a free port; yields (params file, API URL, env for clients)."""
    root = tmp_path_factory.mktemp("server")
    raw = yaml.safe_load((PROJECT_ROOT / "params.yaml").read_text(encoding="utf-8"))
    raw["profile"] = "smoke"
    raw["paths"] = {name: str(root / name)
                    for name in ("data", "results", "metrics", "plots", "reports", "state")}
    raw["orchestration"]["server"]["port"] = free_port()
    params_file = root / "params.yaml"
    params_file.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")

    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    up = _run([str(BIN / "qastress"), "server", "up", "--params", str(params_file)], env,
              timeout=300)
    api_url = f"http://127.0.0.1:{raw['orchestration']['server']['port']}/api"
    assert api_url in up.stdout
    client_env = dict(env, PREFECT_API_URL=api_url, PREFECT_HOME=str(root / "client-home"))
    yield {"params": params_file, "api_url": api_url, "env": env, "client_env": client_env,
           "root": root}
    _run([str(BIN / "qastress"), "server", "down", "--params", str(params_file)], env)
    status = subprocess.run([str(BIN / "qastress"), "server", "status", "--params",
                             str(params_file)], env=env, capture_output=True, text=True,
                            check=False)
    assert status.returncode == 1 and "down" in status.stdout


def _api(api_url: str, query):
    """Run ``query(client)`` against the server's API."""
    import anyio
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    async def call():
        async with get_client() as client:
            return await query(client)

    with temporary_settings(updates={PREFECT_API_URL: api_url}):
        return anyio.run(call)


def _flow_runs(api_url: str, flow_name: str, deployment: str | None = None) -> list:
    from prefect.client.schemas.filters import FlowFilter, FlowFilterName
    from prefect.client.schemas.sorting import FlowRunSort

    async def query(client):
        runs = await client.read_flow_runs(
            flow_filter=FlowFilter(name=FlowFilterName(any_=[flow_name])),
            sort=FlowRunSort.START_TIME_DESC)
        if deployment is None:
            return runs
        found = await client.read_deployment_by_name(f"{flow_name}/{deployment}")
        return [r for r in runs if r.deployment_id == found.id]

    return _api(api_url, query)


@pytest.fixture(scope="module")
def cli_run(server):
    """`qastress stage demo-world` with the server up: the run reports to it by itself."""
    _run([str(BIN / "qastress"), "stage", "demo-world", "--params", str(server["params"])],
         server["env"])
    runs = _flow_runs(server["api_url"], "demo-world")
    assert len(runs) == 1
    return runs[0]


def test_server_answers_on_loopback(server):
    from tasks.server import is_healthy

    assert server["api_url"].startswith("http://127.0.0.1:") and is_healthy(server["api_url"])
    status = _run([str(BIN / "qastress"), "server", "status", "--params",
                   str(server["params"])], server["env"])
    assert status.stdout.startswith("up:")


def test_cli_run_and_its_artifact_are_in_the_api(server, cli_run):
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    assert cli_run.state.is_completed()
    artifacts = _api(server["api_url"], lambda client: client.read_artifacts(
        artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["demo-world"]))))
    assert [a.flow_run_id for a in artifacts] == [cli_run.id]
    rows = artifacts[0].data if isinstance(artifacts[0].data, list) else yaml.safe_load(
        artifacts[0].data)
    files = {row["file"]: int(row["records"]) for row in rows}
    assert files["wikipedia/psgs_w100.tsv"] > 0 and any(f.startswith("trex/") for f in files)


def test_prefect_yaml_deployment_runs_on_a_process_worker(server, cli_run):
    env, params = server["client_env"], str(server["params"])
    prefect = str(BIN / "prefect")
    _run([prefect, "work-pool", "create", POOL, "--type", "process"], env)
    _run([prefect, "--no-prompt", "deploy", "--all"], env)
    results = Path(server["root"]) / "state" / "results"
    _run([prefect, "deployment", "run", "demo-world/demo", "--param", "profile=smoke",
          "--param", f"params_file={params}",
          "--job-variable", f'env={{"PREFECT_LOCAL_STORAGE_PATH": "{results}"}}'], env)
    _run([prefect, "worker", "start", "--pool", POOL, "--run-once"], env, timeout=600)

    [run] = _flow_runs(server["api_url"], "demo-world", deployment="demo")
    assert run.state.is_completed(), run.state
    assert run.parameters == {"profile": "smoke", "params_file": params}
    # the deployment run shares the task cache of the CLI run: nothing was generated again
    task_runs = _api(server["api_url"], lambda client: client.read_task_runs(
        flow_run_filter=_by_id(run.id)))
    assert [t.state.name for t in task_runs] == ["Cached"]


def test_qastress_serve_serves_every_flow(server, cli_run):
    env = server["client_env"]
    # the runner looks for scheduled runs every second instead of every 10 (Prefect's default)
    serve_env = dict(server["env"], PREFECT_RUNNER_POLL_FREQUENCY="1")
    serve = subprocess.Popen([str(BIN / "qastress"), "serve", "--params", str(server["params"]),
                              "--profile", "smoke"], cwd=PROJECT_ROOT, env=serve_env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while not _deployment_exists(server["api_url"], "report/local"):
            assert serve.poll() is None, serve.stdout.read()
            assert time.monotonic() < deadline, "qastress serve registered no deployments"
            time.sleep(1)
        _run([str(BIN / "prefect"), "deployment", "run", "demo-world/local", "--watch",
              "--watch-timeout", "300"], env, timeout=400)
        [run] = _flow_runs(server["api_url"], "demo-world", deployment="local")
        assert run.state.is_completed(), run.state
    finally:
        os.killpg(serve.pid, signal.SIGINT)
        try:
            serve.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(serve.pid, signal.SIGKILL)
            serve.wait(timeout=30)


def test_ui_runs_page_renders_the_flow_run_in_chromium(server, cli_run, chromium):
    url = server["api_url"].removesuffix("/api") + "/runs"
    dom = ""
    # The runs list draws after its API calls return; on a loaded 2-core machine that can take
    # longer than the virtual 20 s, so the budget grows until the page shows the run.
    for budget in (20_000, 40_000, 80_000):
        dom = _dump_dom(chromium, url, budget)
        if cli_run.name in dom:
            break
    assert "Prefect" in dom, dom[:500]
    assert cli_run.name in dom


def _by_id(flow_run_id):
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    return FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id]))


def _deployment_exists(api_url: str, name: str) -> bool:
    from prefect.exceptions import ObjectNotFound

    async def query(client):
        try:
            await client.read_deployment_by_name(name)
        except ObjectNotFound:
            return False
        return True

    return _api(api_url, query)


def _dump_dom(chromium: str, url: str, budget_ms: int) -> str:
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--no-first-run", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
             f"--virtual-time-budget={budget_ms}", "--window-size=1600,2000",
             f"--user-data-dir={profile}", "--dump-dom", url],
            capture_output=True, text=True, timeout=300, check=False)
    return done.stdout


@pytest.fixture(scope="module")
def chromium() -> str:
    """Debian's Chromium, installed with apt-get when missing; skip where that is impossible."""
    found = shutil.which("chromium")
    if found:
        return found
    apt = shutil.which("apt-get")
    if not apt or os.geteuid() != 0:
        pytest.skip("chromium is not installed and cannot be installed here (needs root apt)")
    install = [apt, "install", "-y", "--no-install-recommends", "chromium"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for attempt in (install, [apt, "update"], install):
        subprocess.run(attempt, env=env, capture_output=True, timeout=900, check=False)
        if shutil.which("chromium"):
            return str(shutil.which("chromium"))
    pytest.skip("apt-get could not install chromium")
