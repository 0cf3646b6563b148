"""Flow: write the synthetic demo world's reading sources, in the real formats, under
``data/raw/``: the SQuAD-style sets, PPDB rules, Quora and WikiAnswers paraphrase pairs that
the paraphrase study reads. It runs beside ``flows/demo_world.py``, which writes the retrieval
sources, so the paraphrase branch starts while the encyclopedia is still being written."""

from __future__ import annotations

from prefect import flow

from flows._params import resolve
from flows.demo_world import write_world_half
from tasks.config import Params


@flow(name="demo-reading-world", log_prints=True)
def demo_reading_world(params: Params | None = None, profile: str | None = None,
                       params_file: str | None = None) -> dict[str, int]:
    """Generate the demo world's reading sources: SQuAD-style sets, PPDB, Quora and
    WikiAnswers paraphrase pairs (the paraphrase study's)."""
    return write_world_half(resolve(params, profile, params_file), "reading",
                            "demo-reading-world")


if __name__ == "__main__":
    from flows.cli import main_for

    main_for("demo-reading-world")
