"""Fixtures of the paraphrase tests; the hand-made world itself is in ``para_data_world``."""

from __future__ import annotations

import pytest
from para_data_world import PROJECT_ROOT, write_mini_world


@pytest.fixture(scope="session")
def mini_params(tmp_path_factory):
    """Smoke params whose paths point at a session directory holding the mini world."""
    from tasks.params_loading import load_params

    root = tmp_path_factory.mktemp("para_mini")
    overrides = {f"paths.{name}": str(root / name)
                 for name in ("data", "results", "metrics", "plots", "reports", "state")}
    overrides["paraphrase.world_raters"] = False  # the hand-made world is no demo world
    params = load_params(PROJECT_ROOT / "params.yaml", profile="smoke", overrides=overrides)
    write_mini_world(params.paths.raw, params.sources)
    return params
