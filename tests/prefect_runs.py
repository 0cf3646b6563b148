"""Reading back what the Prefect API recorded about a flow run, for the flow tests."""

from __future__ import annotations

import time

FINAL = ("Cached", "Completed", "Failed", "Crashed")


def task_states(flow_run_id) -> dict[str, list[str]]:
    """Task run name (without its ``-<suffix>``) -> state names, over the flow run and all its
    subflow runs at every depth. The placeholder task runs that stand for subflows in their
    parent are left out."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterParentFlowRunId

    with get_client(sync_client=True) as client:
        ids, placeholders, frontier = [flow_run_id], set(), [flow_run_id]
        while frontier:
            children = client.read_flow_runs(flow_run_filter=FlowRunFilter(
                parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=frontier)))
            frontier = [run.id for run in children]
            ids += frontier
            placeholders |= {run.parent_task_run_id for run in children}
        states: dict[str, list[str]] = {}
        for run_id in ids:
            for task_run in client.read_task_runs(flow_run_filter=FlowRunFilter(
                    id={"any_": [run_id]})):
                if task_run.id not in placeholders:
                    states.setdefault(task_run.name.rsplit("-", 1)[0], []).append(
                        task_run.state.name if task_run.state else "None")
    return states


def settled_task_states(flow_run_id, expected: dict[str, int | None],
                        timeout: float = 20.0) -> dict[str, list[str]]:
    """:func:`task_states` once the expected tasks (name -> number of runs, ``None``: at least
    one) are all in a final state. Prefect 3 reports task states through events, so the API
    may lag the run a little: polls until then, or ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        states = task_states(flow_run_id)
        settled = all(
            (len(states.get(name, [])) == n if n is not None else states.get(name))
            and all(state in FINAL for state in states[name])
            for name, n in expected.items())
        if settled or time.monotonic() > deadline:
            return states
        time.sleep(0.5)
