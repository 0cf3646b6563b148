"""Every number of a metrics directory, flat: ``{"retrieval_bm25.json#/macro/top20": 61.5}``.

Keys are the file name and a JSON pointer (RFC 6901: ``~`` -> ``~0``, ``/`` -> ``~1``) into its
content; list items are addressed by index. Leaves that are not numbers (strings, booleans,
null) are kept too and compared exactly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

Scalar = float | int | str | bool | None


class MetricsError(ValueError):
    """A metrics directory or file that cannot be read."""


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def flatten(obj: Any, prefix: str) -> dict[str, Scalar]:
    """The leaves of a JSON value, keyed ``prefix/pointer`` (an empty container is kept as a
    leaf of its own, so that it cannot vanish unnoticed)."""
    if isinstance(obj, dict) and obj:
        out: dict[str, Scalar] = {}
        for key, value in obj.items():
            out.update(flatten(value, f"{prefix}/{_escape(str(key))}"))
        return out
    if isinstance(obj, list) and obj:
        out = {}
        for index, value in enumerate(obj):
            out.update(flatten(value, f"{prefix}/{index}"))
        return out
    if isinstance(obj, dict | list):
        return {prefix: json.dumps(obj)}
    return {prefix: obj}


def unflatten(flat: dict[str, Scalar], file: str) -> Any:
    """The JSON value of metrics file ``file`` back from :func:`flatten`'s leaves (those keyed
    ``file#...``): objects whose keys are exactly ``0..n-1`` become lists, ``"[]"`` and
    ``"{}"`` empty containers. ``None`` when no leaf belongs to ``file``."""
    prefix = f"{file}#"
    tree: dict[str, Any] = {}
    found = False
    for key, value in flat.items():
        if not key.startswith(prefix):
            continue
        found = True
        tokens = [t.replace("~1", "/").replace("~0", "~")
                  for t in key[len(prefix):].split("/")[1:]]
        if not tokens:
            return json.loads(value) if value in ("[]", "{}") else value
        node = tree
        for token in tokens[:-1]:
            node = node.setdefault(token, {})
        node[tokens[-1]] = json.loads(value) if value in ("[]", "{}") else value
    return _listify(tree) if found else None


def _listify(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    items = {key: _listify(value) for key, value in node.items()}
    if items and sorted(items) == sorted(str(i) for i in range(len(items))):
        return [items[str(i)] for i in range(len(items))]
    return items


def read_metrics(metrics_dir: Path) -> dict[str, Scalar]:
    """Every leaf of every ``*.json`` in ``metrics_dir`` (files sorted by name)."""
    metrics_dir = Path(metrics_dir)
    files = sorted(metrics_dir.glob("*.json")) if metrics_dir.is_dir() else []
    if not files:
        raise MetricsError(f"{metrics_dir}: no metrics (*.json) found; run the study first")
    found: dict[str, Scalar] = {}
    for path in files:
        try:
            content = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise MetricsError(f"{path}: line {exc.lineno}: not valid JSON ({exc.msg})") from None
        found.update(flatten(content, f"{path.name}#"))
    return found
