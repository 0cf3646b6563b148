"""Flow: write the synthetic demo world's retrieval sources, in the real formats, under
``data/raw/``. Its reading sources are another stage's (``flows/demo_reading_world.py``),
which runs beside this one."""

from __future__ import annotations

from prefect import flow

from flows._params import resolve
from tasks.config import Params
from tasks.demo.stage import write_demo_world_task
from tasks.layout import Layout
from tasks.pipeline.demo_world_parts import WorldPart
from tasks.reporting.tables import publish_table_artifact


def write_world_half(params: Params, part: WorldPart, artifact: str) -> dict[str, int]:
    """Write one half of the demo world (``tasks.demo.stage``) and publish its records per
    file as the Prefect table artifact ``artifact``."""
    counts = write_demo_world_task(params.demo_world, Layout(params).raw, part)
    print(f"demo world ({params.profile}), {part} sources under {Layout(params).raw}: "
          + ", ".join(f"{name}={n}" for name, n in counts.items()))
    publish_table_artifact(artifact, ["file", "records"],
                           [[name, n] for name, n in counts.items()],
                           f"Synthetic demo world ({params.profile} profile, seed "
                           f"{params.demo_world.seed}), {part} sources: records written per "
                           "raw file")
    return counts


@flow(name="demo-world", log_prints=True)
def demo_world(params: Params | None = None, profile: str | None = None,
               params_file: str | None = None) -> dict[str, int]:
    """Generate the seeded synthetic encyclopedia: T-REx, Wikidata labels, hyperlink counts,
    passages and the NQ-style sets (the EntityQuestions study's sources)."""
    return write_world_half(resolve(params, profile, params_file), "retrieval", "demo-world")


if __name__ == "__main__":
    from flows.cli import main_for

    main_for("demo-world")
