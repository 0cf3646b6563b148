"""How a flow gets its typed configuration: passed in by a parent, or read from params.yaml."""

from __future__ import annotations

from typing import Any

from tasks.config import Params, load_params


def resolve(params: Params | None = None, profile: str | None = None,
            params_file: str | None = None, overrides: dict[str, Any] | None = None) -> Params:
    """``params`` when a parent flow passes them, else ``params_file`` + ``profile``."""
    if params is not None:
        return params
    return load_params(params_file, profile=profile, overrides=overrides)
