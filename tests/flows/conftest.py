"""The suite's one uninterrupted smoke study (two runs: the second must be all cache hits)."""

from __future__ import annotations

import pytest

from tasks.orchestration import run_settings


@pytest.fixture(scope="session")
def two_runs(smoke_params, prefect_api):
    """The smoke study run twice on ``smoke_params``; its outputs are the suite's reference
    (the study tests read them; the kill-and-resume test compares its report with them)."""
    from flows.study import study

    with run_settings(smoke_params.paths.state):
        first = study(params=smoke_params, return_state=True)
        second = study(params=smoke_params, return_state=True)
    return first, second
