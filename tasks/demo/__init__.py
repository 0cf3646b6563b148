"""The demo world: a seeded synthetic encyclopedia written in the real data formats.

:func:`generate_demo_world` builds a knowledge base of fictional subjects with real objects
(:mod:`tasks.demo.kb`), writes articles about it (:mod:`tasks.demo.articles`), cuts them into
DPR passages and T-REx documents, and derives NQ-like, SQuAD-like and paraphrase resources, all
written with the :mod:`tasks.io` writers under ``data/raw``; in two halves
(:mod:`tasks.demo.world_parts`), which two stages write side by side.
"""

from typing import Any

__all__ = ["generate_demo_world"]


def __getattr__(name: str) -> Any:
    """``generate_demo_world`` imported on first use: the stage registry reads
    :mod:`tasks.demo.world_parts` without the generator's imports."""
    if name == "generate_demo_world":
        from tasks.demo.generate import generate_demo_world

        return generate_demo_world
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
