"""Task runners from params: threads, a Dask LocalCluster (worker processes) and Ray.

The Dask test encodes the passage shards of a tiny world on two worker *processes* with no
Prefect server configured: :func:`tasks.distribution.shared_api` must start one API for the
run so that every worker reports to it, and the shards must equal an in-process encoding.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "retrieval"))
from dense_testkit import tiny_bert, tiny_passages  # noqa: E402

from tasks.config import DenseConfig, OrchestrationConfig  # noqa: E402
from tasks.distribution import (  # noqa: E402
    runner_width,
    shared_api,
    submit_in_waves,
    task_runner_for,
)


def test_thread_runner_is_the_default():
    from prefect.task_runners import ThreadPoolTaskRunner

    cfg = OrchestrationConfig()
    assert cfg.task_runner == "thread"
    assert isinstance(task_runner_for(cfg), ThreadPoolTaskRunner)
    assert runner_width(OrchestrationConfig(max_workers=3)) == 3


def test_submit_in_waves_keeps_plan_order_and_at_most_width_in_flight():
    in_flight: list[int] = []
    peak = [0]

    class Future:
        def __init__(self, value):
            self.value = value
            in_flight.append(value)
            peak[0] = max(peak[0], len(in_flight))

        def result(self):
            in_flight.remove(self.value)
            return self.value

    plan = [(0, 4), (4, 8), (8, 12), (12, 16), (16, 18)]
    got = submit_in_waves(lambda number, item: Future((number, *item)), plan, width=2)
    assert got == [(n, *item) for n, item in enumerate(plan)] and peak[0] == 2
    assert submit_in_waves(lambda n, item: Future(n), plan, width=0) == list(range(5))
    assert peak[0] == 2 and submit_in_waves(lambda n, item: Future(n), [], width=3) == []


def test_dask_local_cluster_binds_to_loopback():
    from prefect_dask import DaskTaskRunner

    cfg = OrchestrationConfig(task_runner="dask", dask={"n_workers": 3, "threads_per_worker": 2})
    runner = task_runner_for(cfg)
    assert isinstance(runner, DaskTaskRunner)
    assert runner.cluster_kwargs["host"] == "127.0.0.1"
    assert runner.cluster_kwargs["dashboard_address"].startswith("127.0.0.1:")
    assert runner.cluster_kwargs["processes"] is True and runner_width(cfg) == 6


def test_dask_existing_cluster_by_address():
    cfg = OrchestrationConfig(task_runner="dask", dask={"address": "tcp://10.0.0.5:8786"})
    runner = task_runner_for(cfg)
    assert runner.address == "tcp://10.0.0.5:8786" and runner_width(cfg) is None


def test_ray_without_prefect_ray_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "prefect_ray", None)  # import fails like a missing extra
    with pytest.raises(RuntimeError, match=r"qastress\[ray\]"):
        task_runner_for(OrchestrationConfig(task_runner="ray"))


def test_local_ray_binds_its_dashboard_to_loopback():
    pytest.importorskip("prefect_ray")
    runner = task_runner_for(OrchestrationConfig(task_runner="ray", ray={"num_cpus": 2}))
    assert runner.init_kwargs["dashboard_host"] == "127.0.0.1"
    assert runner.init_kwargs["num_cpus"] == 2
    remote = task_runner_for(OrchestrationConfig(task_runner="ray",
                                                 ray={"address": "ray://10.0.0.5:10001"}))
    assert remote.address == "ray://10.0.0.5:10001"


def test_shared_api_exports_a_configured_url_and_restores_the_environment(monkeypatch):
    from prefect.settings import PREFECT_API_URL

    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    cfg = OrchestrationConfig(task_runner="dask", api_url="http://127.0.0.1:4999/api")
    with shared_api(cfg) as url:
        assert url == "http://127.0.0.1:4999/api"
        assert os.environ["PREFECT_API_URL"] == url and PREFECT_API_URL.value() == url
    assert "PREFECT_API_URL" not in os.environ


def test_shard_encoding_on_dask_worker_processes_matches_in_process(tmp_path, monkeypatch):
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from flows.encode_passages import encode_passages_on
    from tasks.io.passages import write_passages
    from tasks.orchestration import run_settings
    from tasks.retrieval.dense_shards import encode_shards, ids_path
    from tasks.retrieval.encoders import resolve_encoder_spec

    model = tiny_bert(tmp_path / "tiny-bert")
    passages = tmp_path / "psgs_w100.tsv"
    write_passages(passages, tiny_passages())  # 24 passages -> 6 shards of 4
    spec = resolve_encoder_spec(str(model), max_length=64)
    dense = DenseConfig(shard_size=4, batch_size=4, device="cpu", max_length=64)
    cfg = OrchestrationConfig(task_runner="dask", dask={
        "n_workers": 2, "threads_per_worker": 1, "processes": True, "dashboard_address": None})

    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    with temporary_settings(updates={PREFECT_API_URL: None}), \
            run_settings(tmp_path / "state"), shared_api(cfg) as url:
        assert url and url.startswith("http://127.0.0.1:")  # one API started for the run
        started = datetime.now(UTC)
        records = encode_passages_on(cfg, passages, tmp_path / "dask-shards", spec, dense)
        states = _shard_task_states(since=started)
    assert [(r["start"], r["end"], r["rows"]) for r in records] == [
        (i, i + 4, 4) for i in range(0, 24, 4)]
    assert states == ["Completed"] * 6  # every worker reported its task run to the shared API

    reference = encode_shards(passages, tmp_path / "ref-shards", spec, 4, batch_size=4,
                              device="cpu")
    for got, want in zip(records, reference, strict=True):
        np.testing.assert_allclose(np.load(got["path"]), np.load(want["path"]),
                                   rtol=1e-5, atol=1e-6)
        assert (json.loads(ids_path(Path(got["path"])).read_text())["ids"]
                == json.loads(ids_path(Path(want["path"])).read_text())["ids"])


def _shard_task_states(since: datetime) -> list[str]:
    """State names of the shard task runs that the current Prefect API recorded since then."""
    import anyio
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        TaskRunFilter,
        TaskRunFilterName,
        TaskRunFilterStartTime,
    )

    async def fetch() -> list[str]:
        async with get_client() as client:
            runs = await client.read_task_runs(task_run_filter=TaskRunFilter(
                name=TaskRunFilterName(like_="encode passage shard"),
                start_time=TaskRunFilterStartTime(after_=since)))
        return sorted(r.state.name for r in runs)

    return anyio.run(fetch)


def test_shard_encoding_on_ray_matches_in_process(tmp_path, monkeypatch):
    """The optional Ray runner (``pip install 'qastress[ray]'``) on a local Ray instance."""
    pytest.importorskip("prefect_ray")
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from flows.encode_passages import encode_passages_on
    from tasks.io.passages import write_passages
    from tasks.orchestration import run_settings
    from tasks.retrieval.dense_shards import encode_shards
    from tasks.retrieval.encoders import resolve_encoder_spec

    model = tiny_bert(tmp_path / "tiny-bert")
    passages = tmp_path / "psgs_w100.tsv"
    write_passages(passages, tiny_passages())
    spec = resolve_encoder_spec(str(model), max_length=64)
    dense = DenseConfig(shard_size=8, batch_size=4, device="cpu", max_length=64)
    cfg = OrchestrationConfig(task_runner="ray", ray={"num_cpus": 2})
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    with temporary_settings(updates={PREFECT_API_URL: None}), \
            run_settings(tmp_path / "state"), shared_api(cfg):
        records = encode_passages_on(cfg, passages, tmp_path / "ray-shards", spec, dense)
    reference = encode_shards(passages, tmp_path / "ref-shards", spec, 8, batch_size=4,
                              device="cpu")
    assert [(r["start"], r["end"]) for r in records] == [(r["start"], r["end"])
                                                          for r in reference]
    for got, want in zip(records, reference, strict=True):
        np.testing.assert_allclose(np.load(got["path"]), np.load(want["path"]),
                                   rtol=1e-5, atol=1e-6)


def test_prepare_worker_exit_calls_the_hook_then_freezes_the_heap():
    import gc

    from tasks.distribution import prepare_worker_exit

    calls: list[int] = []
    gc.unfreeze()
    try:
        prepare_worker_exit(lambda: calls.append(gc.get_freeze_count()))
        assert calls == [0]  # the hook ran first, on a heap not yet frozen
        assert gc.get_freeze_count() > 0
        gc.unfreeze()
        prepare_worker_exit()  # no hook: only the freeze
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_the_stage_cluster_logs_no_dashboard_link_since_it_has_no_dashboard():
    """prefect-dask logs Dask's templated dashboard URL even without a dashboard; the stage
    cluster's start shows its other lines, not that one, and the filter goes with it. Its
    scheduler's HTTP server does not take Dask's default port."""
    import logging

    from tasks.distribution import stage_runner

    runner_log = logging.getLogger("prefect.task_runner.dask")
    messages: list[str] = []
    handler = logging.Handler(logging.INFO)
    handler.emit = lambda record: messages.append(record.getMessage())
    runner_log.addHandler(handler)
    level = runner_log.level
    runner_log.setLevel(logging.INFO)
    try:
        with stage_runner(1) as runner:
            # its HTTP server takes a free port (ephemeral), never Dask's default 8787
            http_port = runner.client.scheduler_info()["services"]["dashboard"]
    finally:
        runner_log.removeHandler(handler)
        runner_log.setLevel(level)
    assert any("Creating a new Dask cluster" in m for m in messages), messages
    assert not any("dashboard" in m for m in messages), messages
    assert http_port != 8787
    assert not [f for f in runner_log.filters if type(f).__name__ == "_DropDashboardLink"]
