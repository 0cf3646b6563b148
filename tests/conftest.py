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
    from tasks.params_loading import load_params

    root = tmp_path_factory.mktemp("smoke")
    overrides = {f"paths.{name}": str(root / name)
                 for name in ("data", "results", "metrics", "plots", "reports", "state")}
    return load_params(PROJECT_ROOT / "params.yaml", profile="smoke", overrides=overrides)


@pytest.fixture(scope="session")
def quick_demo_taggers(smoke_params, tmp_path_factory, worker_id):
    """The quick Flair demo taggers of the smoke world, trained once for the whole test run:
    the xdist workers share them through the run's common temp directory (under a file lock,
    pytest-xdist's recipe for a session fixture that runs once); the others read them back
    (:func:`tasks.demo.taggers.train_demo_taggers` reuses taggers trained from the same
    inputs). About a minute of training on 2 cores, which two test files need."""
    from filelock import FileLock

    from models.flair_training import QUICK_CONFIGS
    from tasks.demo.taggers import QUICK_CORPUS_OPTIONS, train_demo_taggers

    root = tmp_path_factory.getbasetemp()
    if worker_id != "master":  # pytest-xdist: popen-gwN/ inside the run's directory
        root = root.parent
    out = root / "flair-demo-taggers"
    with FileLock(str(out) + ".lock"):
        return train_demo_taggers(smoke_params.demo_world, out, configs=QUICK_CONFIGS,
                                  corpus_options=QUICK_CORPUS_OPTIONS)


@pytest.fixture(scope="session")
def smoke_world(smoke_params):
    """The smoke demo world written once for the session; returns the params that point at it."""
    from tasks.demo import generate_demo_world

    generate_demo_world(smoke_params.demo_world, smoke_params.paths.raw)
    return smoke_params


#: The test files that take longest, longest first (seconds in Session 32's CI on 2 cores,
#: side by side). They are handed to the test workers first, so they start at once on
#: different workers and the short files fill in around them; in xdist's own order (files with
#: the most tests first) the `dvc repro` file could start 17 minutes into the run and end it
#: alone.
LONGEST_FILES = ("tests/flows/test_study_flow.py",     # ~700: the study twice, kill-and-resume
                 "tests/flows/test_dvc_repro.py",      # ~470: `dvc repro retrieval`, exp, push
                 "tests/flows/test_prefect_server.py")  # ~290: a server, deploy, serve


def pytest_collection_modifyitems(config, items):
    """The :data:`LONGEST_FILES` first, in that order, then the rest in collection order (with
    ``--dist loadfile --no-loadscope-reorder`` each worker takes whole files in this order)."""
    rank = {name: position for position, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.partition("::")[0], len(rank)))


def pytest_configure(config):
    """Keep tests offline: no telemetry, no hub downloads."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
