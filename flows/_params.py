"""How a flow gets its typed configuration (passed in by a parent, or read from params.yaml)
and its raw inputs (present, or a clear error saying how to get them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tasks.config import Params
from tasks.io.errors import MissingInputError, require_input
from tasks.params_loading import load_params


def resolve(params: Params | None = None, profile: str | None = None,
            params_file: str | None = None, overrides: dict[str, Any] | None = None) -> Params:
    """``params`` when a parent flow passes them, else ``params_file`` + ``profile``."""
    if params is not None:
        return params
    return load_params(params_file, profile=profile, overrides=overrides)


def how_to_get_raw(params: Params, source_key: str) -> str:
    """What makes the raw input ``sources.<source_key>``: the demo world's stage, or the
    ``qastress data fetch`` source whose directory holds it."""
    if params.sources.world == "demo":
        return (f"the demo world writes it: run `qastress stage "
                f"{demo_world_stage(str(getattr(params.sources, source_key)))}` first (or the "
                "whole study, `qastress run`)")
    from tasks.fetch import fetch_command

    command = fetch_command(str(getattr(params.sources, source_key)))
    fetch = f"`{command}`" if command else "`qastress data fetch` (see `qastress data list`)"
    return f"fetch it with {fetch}, or point sources.{source_key} in params.yaml at your copy"


def demo_world_stage(relative: str) -> str:
    """The ``qastress stage`` command of the demo world's half that writes ``relative`` (a
    path or glob under the raw root: its first directory decides)."""
    from tasks.pipeline.demo_world_parts import COMMANDS, part_writing

    return COMMANDS[part_writing(relative) or "retrieval"]


def raw_input(params: Params, source_key: str) -> Path:
    """The path of raw input ``sources.<source_key>``; a :class:`MissingInputError` naming it
    and how to get it when it is not there."""
    return require_input(params.raw_path(source_key), f"such file (sources.{source_key})",
                         how_to_get_raw(params, source_key))


def raw_files(params: Params, source_key: str, paths: list[Path]) -> list[Path]:
    """``paths`` matched by the pattern ``sources.<source_key>``; a
    :class:`MissingInputError` when it matches none."""
    if not paths:
        raise MissingInputError(f"{params.raw_path(source_key)}: no file matches "
                                f"sources.{source_key}; {how_to_get_raw(params, source_key)}")
    return paths


def stage_output(path: Path, what: str, stage: str) -> Path:
    """``path`` written by the stage ``stage``; a :class:`MissingInputError` saying to run it
    first when the path is not there."""
    return require_input(path, what, f"run `qastress stage {stage}` first (or the whole study, "
                         "`qastress run`)")
