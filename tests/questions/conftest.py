"""Fixtures of the EntityQuestions construction tests (the world itself is in eq_world.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from eq_world import build_world

from tasks.config import Params


@pytest.fixture(scope="session")
def eq_world(tmp_path_factory) -> tuple[Path, dict]:
    """The hand-built world written once: (directory holding ``data/raw``, truth)."""
    root = tmp_path_factory.mktemp("eq-world")
    truth = build_world(root / "data" / "raw")
    return root, truth


@pytest.fixture(scope="session")
def smoke_demo_world(request) -> Params:
    """The session's smoke demo world (skips while ``tasks.demo`` cannot generate one)."""
    try:
        from tasks.demo import generate_demo_world  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"the demo world generator is not available yet: {exc}")
    return request.getfixturevalue("smoke_world")
