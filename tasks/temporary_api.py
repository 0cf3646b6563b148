"""One temporary Prefect API server for a run, started robustly on a slow or busy machine.

Without a configured server, Prefect 3 starts a temporary API per *process* on first use
(``SubprocessASGIServer``) and gives up after ``server.ephemeral.startup_timeout_seconds``
(20 by default, counted in 0.1 s sleeps): on a busy 2-core machine a run died with
``RuntimeError: Timed out while attempting to connect to ephemeral Prefect API server``.

:func:`temporary_api` starts the same server (uvicorn + Prefect's app factory, as
``SubprocessASGIServer`` does) once per run with

- a wall-clock start-up timeout set by the project (``orchestration.api_startup_timeout_s``);
- retries on a fresh port when the server exits or does not answer in time
  (``orchestration.api_start_attempts``);
- its output in ``<PREFECT_HOME>/temporary-api.log`` rather than on the console;
- one :class:`ApiStartError` that says what happened and what to do when it really cannot start.

The caller (:func:`tasks.distribution.shared_api`) points the run and every process it starts at
the server's URL, so that nothing starts a second one.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tasks.server import is_healthy

LOOPBACK = "127.0.0.1"
LOG_NAME = "temporary-api.log"
#: Environment of the server process, as Prefect's ``SubprocessASGIServer`` sets it.
SERVER_ENV = {"PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1",
              "PREFECT__SERVER_FINAL": "1"}


class ApiStartError(RuntimeError):
    """No temporary Prefect API could be started; the message says why and what to do."""


@dataclass
class TemporaryApi:
    """A started temporary API server process."""

    port: int
    process: subprocess.Popen
    log: Path
    attempts: list[str] = field(default_factory=list)

    @property
    def api_url(self) -> str:
        """The ``PREFECT_API_URL`` of this server."""
        return f"http://{LOOPBACK}:{self.port}/api"

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate the server (kill it when it does not exit within ``timeout`` s)."""
        _terminate(self.process, timeout)


def free_port(host: str = LOOPBACK) -> int:
    """A TCP port that is free on ``host`` right now."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def server_command(port: int) -> list[str]:
    """The command that runs Prefect's API on ``port`` (as ``SubprocessASGIServer`` does)."""
    import prefect

    return [sys.executable, "-m", "uvicorn", "--app-dir", str(prefect.__module_path__.parent),
            "--factory", "prefect.server.api.server:create_app", "--host", LOOPBACK,
            "--port", str(port), "--log-level", "error", "--lifespan", "on"]


def server_environment() -> dict[str, str]:
    """The server's environment: ours, the current Prefect settings, no UI, ephemeral mode."""
    from prefect.settings import get_current_settings

    env = {**os.environ, **SERVER_ENV,
           **get_current_settings().to_environment_variables(exclude_unset=True)}
    env.pop("PREFECT_API_URL", None)  # the server itself reports to nobody
    return env


def prefect_home() -> Path:
    """Prefect's home directory (its SQLite database), created with its parents."""
    from prefect.settings import PREFECT_HOME

    home = Path(PREFECT_HOME.value()).expanduser()
    home.mkdir(parents=True, exist_ok=True)  # Prefect itself creates the last level only
    return home


def start_temporary_api(timeout_s: float, attempts: int = 3,
                        command: Sequence[str] | None = None) -> TemporaryApi:
    """Start a temporary API and wait until it answers ``GET /api/health``.

    Each attempt uses a free port and waits up to ``timeout_s`` seconds of wall-clock time; an
    attempt whose server exits or stays silent is stopped and the next one starts. ``command``
    (``{port}`` is replaced) replaces :func:`server_command`, for tests. Raises
    :class:`ApiStartError` after ``attempts`` failures.
    """
    log = prefect_home() / LOG_NAME
    env = server_environment()
    failures: list[str] = []
    for attempt in range(1, max(1, attempts) + 1):
        port = free_port(LOOPBACK)
        argv = ([part.replace("{port}", str(port)) for part in command] if command
                else server_command(port))
        with log.open("ab") as sink:
            offset = sink.tell()
            sink.write(f"--- temporary Prefect API on port {port} (attempt {attempt})\n"
                       .encode())
            sink.flush()
            process = subprocess.Popen(argv, env=env, stdout=sink, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL)
        api = TemporaryApi(port, process, log, failures)
        problem = _wait_until_healthy(api, timeout_s)
        if problem is None:
            return api
        api.stop()
        failures.append(f"attempt {attempt}: {problem}{_log_tail(log, offset)}")
    raise ApiStartError(
        f"could not start a temporary Prefect API ({len(failures)} attempt(s), "
        f"{timeout_s:g} s each):\n  " + "\n  ".join(failures) + f"\nServer log: {log}\n"
        "If the machine is busy, allow more time (--set orchestration.api_startup_timeout_s="
        f"{max(600, 2 * timeout_s):g}) or start a server once with `qastress server up` "
        "(runs then report to it).")


def _wait_until_healthy(api: TemporaryApi, timeout_s: float) -> str | None:
    """None once the API answers; else why not (the process exited, or the time ran out)."""
    deadline = time.monotonic() + timeout_s
    while True:
        code = api.process.poll()
        if code is not None:
            return f"the server exited with code {code}"
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return f"no answer within {timeout_s:g} s"
        if is_healthy(api.api_url, timeout=max(0.1, min(5.0, remaining))):
            return None
        time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))


def _log_tail(log: Path, offset: int, lines: int = 3) -> str:
    """The last lines the server of one attempt wrote (from ``offset`` of its log)."""
    with contextlib.suppress(OSError), log.open("rb") as handle:
        handle.seek(offset)
        text = handle.read().decode("utf-8", errors="replace").strip().splitlines()[1:]
        tail = [line.strip() for line in text if line.strip()][-lines:]
        if tail:
            return " (log: " + " | ".join(tail) + ")"
    return ""


def _terminate(process: subprocess.Popen, timeout: float) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextlib.contextmanager
def temporary_api(timeout_s: float, attempts: int = 3) -> Iterator[TemporaryApi]:
    """:func:`start_temporary_api` for the duration of a ``with`` block, then stop it."""
    api = start_temporary_api(timeout_s, attempts)
    try:
        yield api
    finally:
        from prefect.logging.handlers import APILogWorker

        with contextlib.suppress(Exception):
            APILogWorker.drain_all(timeout=10, at_exit=False)  # last logs reach it first
        api.stop()
