"""Shared fixtures: one Prefect test API for the session, the smoke world, ../shared samples."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import tasks  # noqa: F401  (offline/telemetry environment before Prefect is imported)

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHARED = PROJECT_ROOT.parent / "shared"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` (the CEO's real samples); tests using it skip when it is absent."""
    path = SHARED / "data"
    if not path.is_dir():
        pytest.skip("../shared/data is not present (real samples are only in the dev checkout)")
    return path


@pytest.fixture(scope="session")
def prefect_api():
    """One ephemeral Prefect API for every flow test (it takes 7-14 s to start on 2 cores)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture(scope="session")
def smoke_params(tmp_path_factory):
    """The smoke profile with every path inside a session temp directory."""
    from tasks.config import load_params

    root = tmp_path_factory.mktemp("smoke")
    overrides = {f"paths.{name}": str(root / name)
                 for name in ("data", "results", "metrics", "plots", "reports", "state")}
    return load_params(PROJECT_ROOT / "params.yaml", profile="smoke", overrides=overrides)


@pytest.fixture(scope="session")
def smoke_world(smoke_params):
    """The smoke demo world written once for the session; returns the params that point at it."""
    from tasks.demo import generate_demo_world

    generate_demo_world(smoke_params.demo_world, smoke_params.paths.raw)
    return smoke_params


def pytest_configure(config):
    """Keep tests offline: no telemetry, no hub downloads."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
