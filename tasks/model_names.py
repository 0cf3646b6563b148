"""Names of encoder models as the configuration writes them (configuration layer: no imports).

``packaged:<name>`` names a model shipped inside a Python package; anything else is a local
directory or a Hugging Face hub name. :func:`model_slug` turns any of them into a directory-safe
name (``data/indexes/dense/<slug>/``).
"""

from __future__ import annotations

from pathlib import Path

PACKAGED_PREFIX = "packaged:"


def model_slug(model: str) -> str:
    """A directory-safe model name: ``packaged:X`` -> ``X``; a path -> its directory name;
    a hub name ``org/name`` -> ``org--name``."""
    if model.startswith(PACKAGED_PREFIX):
        return model[len(PACKAGED_PREFIX):]
    path = Path(model).expanduser()
    if path.exists() or model.startswith(("/", ".", "~")):
        return path.resolve().name or "model"
    return model.replace("/", "--")
