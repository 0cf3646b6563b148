"""The demo world: a seeded synthetic encyclopedia written in the real data formats.

:func:`generate_demo_world` builds a knowledge base of fictional subjects with real objects
(:mod:`tasks.demo.kb`), writes articles about it (:mod:`tasks.demo.articles`), cuts them into
DPR passages and T-REx documents, and derives NQ-like, SQuAD-like and paraphrase resources, all
written with the :mod:`tasks.io` writers under ``data/raw``; in two halves
(:mod:`tasks.pipeline.demo_world_parts`), which two stages write side by side.
"""

from tasks.demo.generate import generate_demo_world

__all__ = ["generate_demo_world"]
