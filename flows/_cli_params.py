"""The command line's one way to load the parameters: a bad file or value is one line, exit 2."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from tasks.config import Params


def load_params_or_exit(params_file: Path | None, profile: str | None,
                        overrides: dict[str, Any] | None = None) -> Params:
    """:func:`tasks.params_loading.load_params`; a :class:`~tasks.params_loading.ParamsError` prints
    ``invalid parameters: ...`` on stderr and exits 2 (no traceback)."""
    from tasks.params_loading import ParamsError, load_params

    try:
        return load_params(params_file, profile=profile, overrides=overrides)
    except ParamsError as exc:
        typer.secho(f"invalid parameters: {exc}", fg="red", err=True)
        raise typer.Exit(2) from None
