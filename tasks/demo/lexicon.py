"""The curated word lists and sentence templates the generator reads (``tasks/demo/data``)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any


@cache
def load_data(name: str) -> dict[str, Any]:
    """One JSON file of ``tasks/demo/data`` (``lexicon``, ``prose``, ``questions``, ...)."""
    text = resources.files("tasks.demo").joinpath("data").joinpath(f"{name}.json").read_text(
        encoding="utf-8")
    return json.loads(text)


def lexicon() -> dict[str, Any]:
    """Inventories and name parts: genres, positions, labels, title words, syllables."""
    return load_data("lexicon")
