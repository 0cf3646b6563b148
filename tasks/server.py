"""A local Prefect server for the study: ``qastress server up | status | down``.

A thin wrapper over ``prefect server start --background`` / ``prefect server stop``: the server
binds to ``orchestration.server.host`` (loopback by default) with analytics off, and keeps its
SQLite database and PID file under ``paths.state/prefect`` (``PREFECT_HOME``), so the runs of
one project stay together. ``server.json`` there records the API URL; ``qastress run`` reports
to that server while it answers, and otherwise uses a temporary in-process API.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tasks.config import Params
from tasks.io.atomic import write_json

SERVER_FILE = "server.json"


@dataclass(frozen=True)
class ServerInfo:
    """Where a local server listens and where its state lives."""

    home: Path
    host: str
    port: int

    @property
    def url(self) -> str:
        """The UI's address."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::") else self.host
        return f"http://{host}:{self.port}"

    @property
    def api_url(self) -> str:
        """The API's address (``PREFECT_API_URL``)."""
        return f"{self.url}/api"


def server_info(params: Params, host: str | None = None, port: int | None = None) -> ServerInfo:
    """The server of this configuration (``host``/``port`` override the params)."""
    cfg = params.orchestration.server
    return ServerInfo(home=(params.paths.state / "prefect").resolve(),
                      host=host or cfg.host, port=port or cfg.port)


def server_env(info: ServerInfo) -> dict[str, str]:
    """The environment of the server process and of the ``prefect`` CLI talking to it."""
    env = dict(os.environ)
    env.update({
        "PREFECT_HOME": str(info.home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "PREFECT_SERVER_API_HOST": info.host,
        "PREFECT_SERVER_API_PORT": str(info.port),
        "PREFECT_UI_API_URL": info.api_url,
    })
    env.pop("PREFECT_API_URL", None)  # the server itself must not point at another API
    return env


def prefect_cli() -> list[str]:
    """The ``prefect`` command of this environment."""
    beside = Path(sys.executable).with_name("prefect")
    found = str(beside) if beside.exists() else shutil.which("prefect")
    if not found:
        raise RuntimeError("the `prefect` command is not installed in this environment")
    return [found]


def is_healthy(api_url: str, timeout: float = 2.0) -> bool:
    """Whether a Prefect API answers ``GET /health`` at ``api_url``."""
    try:
        with urllib.request.urlopen(f"{api_url}/health", timeout=timeout) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def wait_healthy(api_url: str, timeout: float = 120.0, interval: float = 0.5) -> None:
    """Block until the API answers; ``TimeoutError`` naming the URL after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if is_healthy(api_url):
            return
        time.sleep(interval)
    raise TimeoutError(f"no Prefect API answered at {api_url}/health within {timeout:.0f} s")


def start_server(info: ServerInfo, timeout: float = 120.0) -> ServerInfo:
    """Start the server in the background (no-op when it already answers); wait until it does.

    Its log is ``<home>/server.log``; ``server.json`` records host, port and API URL.
    """
    if is_healthy(info.api_url):
        return info
    info.home.mkdir(parents=True, exist_ok=True)
    stale = info.home / "server.pid"
    if stale.exists():  # left by a killed server: prefect refuses to start while it exists
        stale.unlink()
    log = info.home / "server.log"
    with log.open("ab") as sink:
        subprocess.run([*prefect_cli(), "server", "start", "--background", "--analytics-off",
                        "--host", info.host, "--port", str(info.port)],
                       env=server_env(info), stdout=sink, stderr=subprocess.STDOUT, check=True,
                       timeout=timeout)
    wait_healthy(info.api_url, timeout=timeout)
    write_json(info.home / SERVER_FILE, {"host": info.host, "port": info.port,
                                         "url": info.url, "api_url": info.api_url})
    return info


def stop_server(info: ServerInfo, timeout: float = 30.0) -> bool:
    """Stop the background server of ``info.home``; whether one was running."""
    was_up = is_healthy(info.api_url)
    subprocess.run([*prefect_cli(), "server", "stop"], env=server_env(info), check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout)
    deadline = time.monotonic() + timeout
    while is_healthy(info.api_url) and time.monotonic() < deadline:
        time.sleep(0.3)
    (info.home / SERVER_FILE).unlink(missing_ok=True)
    return was_up


def recorded_api_url(state_dir: Path) -> str | None:
    """The API URL of a ``qastress server up`` server of this project, if it answers."""
    record = Path(state_dir) / "prefect" / SERVER_FILE
    try:
        api_url = json.loads(record.read_text(encoding="utf-8"))["api_url"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return api_url if is_healthy(api_url) else None


def run_api_url(params: Params) -> str | None:
    """The API a run reports to: ``orchestration.api_url``, ``$PREFECT_API_URL``, then a
    running ``qastress server up`` server; None = Prefect's temporary in-process API."""
    return (params.orchestration.api_url or os.environ.get("PREFECT_API_URL")
            or recorded_api_url(params.paths.state))
