"""Configuration of orchestration: the Prefect API, the local server and the task runners
(``orchestration`` in params.yaml; re-exported by :mod:`tasks.config`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tasks import API_STARTUP_TIMEOUT_S
from tasks.config_section import Section


class ServerConfig(Section):
    """The local Prefect server of ``qastress server up`` (its database lives under
    ``paths.state/prefect``)."""

    host: str = Field("127.0.0.1", min_length=1, description="bind address (loopback default)")
    port: int = Field(4200, ge=1, le=65535)


class DaskConfig(Section):
    """prefect-dask's ``DaskTaskRunner``: a local cluster, or an existing one by address."""

    address: str | None = Field(None, description="scheduler of an existing cluster "
                                "(tcp://host:8786); None = start a LocalCluster")
    n_workers: int = Field(2, ge=1)
    threads_per_worker: int = Field(1, ge=1)
    processes: bool = Field(True, description="worker processes (False: threads in-process)")
    dashboard_address: str | None = Field(
        "127.0.0.1:8787", description="LocalCluster dashboard (None = no dashboard)")


class RayConfig(Section):
    """prefect-ray's ``RayTaskRunner`` (optional extra ``qastress[ray]``)."""

    address: str | None = Field(None, description="ray://host:10001 of an existing cluster; "
                                "None = a local Ray instance")
    num_cpus: int | None = Field(None, ge=1, description="local instance only")


class OrchestrationConfig(Section):
    """Where flows report and where shard-parallel tasks run.

    ``api_url`` None: a ``qastress server up`` server when one is running, else a temporary
    local API. ``task_runner`` picks the runner of the shard-parallel subflows (passage
    encoding, BM25 batches, paraphrase generation): ``thread`` (in-process), ``dask`` or
    ``ray``. Worker processes report to the same API as the flow: without a server, one
    temporary API is started for the run and shared. ``concurrent_stages`` > 1 runs the
    study's independent stages side by side (:func:`flows.study.study`).
    """

    api_url: str | None = None
    api_startup_timeout_s: float = Field(API_STARTUP_TIMEOUT_S, gt=0)
    api_start_attempts: int = Field(3, ge=1)
    server: ServerConfig = ServerConfig()
    concurrent_stages: int = Field(
        1, ge=1, description="stages of the study run at once, each in its own process of a "
        "local Dask cluster, as soon as the stages it reads from are done (1: one after the "
        "other in the flow's process)")
    task_runner: Literal["thread", "dask", "ray"] = "thread"
    max_workers: int | None = Field(None, ge=1, description="thread runner threads")
    dask: DaskConfig = DaskConfig()
    ray: RayConfig = RayConfig()
