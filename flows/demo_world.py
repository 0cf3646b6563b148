"""Flow: write the synthetic demo world, in the real formats, under ``data/raw/``."""

from __future__ import annotations

from prefect import flow

from flows._params import resolve
from tasks.config import Params
from tasks.demo.stage import write_demo_world_task
from tasks.layout import Layout
from tasks.reporting.tables import publish_table_artifact


@flow(name="demo-world", log_prints=True)
def demo_world(params: Params | None = None, profile: str | None = None,
               params_file: str | None = None) -> dict[str, int]:
    """Generate the seeded synthetic encyclopedia (T-REx, passages, NQ, PPDB, SQuAD, ...)."""
    params = resolve(params, profile, params_file)
    counts = write_demo_world_task(params.demo_world, Layout(params).raw)
    print(f"demo world ({params.profile}) under {Layout(params).raw}: "
          + ", ".join(f"{name}={n}" for name, n in counts.items()))
    publish_table_artifact("demo-world", ["file", "records"],
                           [[name, n] for name, n in counts.items()],
                           f"Synthetic demo world ({params.profile} profile, seed "
                           f"{params.demo_world.seed}): records written per raw file")
    return counts


if __name__ == "__main__":
    from flows.cli import main_for

    main_for("demo-world")
