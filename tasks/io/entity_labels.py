"""Entity labels, the project's knowledge-base interchange: JSON lines, one entity a line::

    {"id": "Q42", "label": "Douglas Adams", "aliases": ["Douglas Noël Adams"],
     "type": "person", "description": "English writer"}

``id`` (a Wikidata item id, ``Q`` + digits) and ``label`` (non-empty) are required;
``aliases`` defaults to ``[]``; ``type`` and ``description`` are optional and may be ``null``.
Errors name the file and the 1-based line.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks.io._jsonstream import iter_jsonl, write_jsonl
from tasks.io.errors import DataFormatError, SkipCounter, handle, preview

_QID = re.compile(r"Q\d+")


@dataclass(frozen=True, slots=True)
class EntityLabel:
    """A knowledge-base entity: Wikidata id, English label, aliases, optional type/description."""

    id: str
    label: str
    aliases: tuple[str, ...] = ()
    type: str | None = None
    description: str | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """The label followed by the aliases that differ from it, without repeats."""
        return tuple(dict.fromkeys((self.label, *self.aliases)))


def parse_entity_label(value: Any, path: str | Path = "<entity labels>",
                       where: str = "line 1") -> EntityLabel:
    """Validate one decoded line; raise :class:`DataFormatError` naming ``path`` and ``where``."""
    if not isinstance(value, dict):
        raise DataFormatError(path, where, 'an object {"id", "label", "aliases", ...}',
                              preview(value))
    entity_id = value.get("id")
    if not isinstance(entity_id, str) or not _QID.fullmatch(entity_id):
        raise DataFormatError(path, where, 'an "id" that is a Wikidata item id (Q<digits>)',
                              preview(entity_id))
    label = value.get("label")
    if not isinstance(label, str) or not label.strip():
        raise DataFormatError(path, where, f'a non-empty string "label" for {entity_id}',
                              preview(label))
    aliases = value.get("aliases", [])
    if aliases is None:
        aliases = []
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise DataFormatError(path, where, f'"aliases" as a list of strings for {entity_id}',
                              preview(aliases))
    optional: dict[str, str | None] = {}
    for key in ("type", "description"):
        item = value.get(key)
        if item is not None and not isinstance(item, str):
            raise DataFormatError(path, where, f'"{key}" as a string or null for {entity_id}',
                                  preview(item))
        optional[key] = item
    return EntityLabel(entity_id, label, tuple(aliases), optional["type"],
                       optional["description"])


def iter_entity_labels(path: str | Path, on_error: str = "raise",
                       skips: SkipCounter | None = None) -> Iterator[EntityLabel]:
    """Stream the entities of an entity-label JSONL file (duplicates are not checked here).

    A malformed line raises :class:`DataFormatError` naming file and line, or with
    ``on_error="skip"`` is counted in ``skips``.
    """
    for lineno, value in iter_jsonl(path, on_error, skips):
        try:
            yield parse_entity_label(value, path, f"line {lineno}")
        except DataFormatError as error:
            handle(error, on_error, skips)


def read_entity_labels(path: str | Path, on_error: str = "raise",
                       skips: SkipCounter | None = None,
                       wanted: Collection[str] | None = None) -> dict[str, EntityLabel]:
    """Read an entity-label file into ``{id: EntityLabel}`` in file order.

    ``wanted`` keeps only those ids (the file is still streamed and validated whole, so a
    real Wikidata label dump never has to fit in memory). An id seen twice is a
    :class:`DataFormatError` naming both lines (in skip mode the later line is counted in
    ``skips`` and left out).
    """
    entities: dict[str, EntityLabel] = {}
    first_line: dict[str, int] = {}
    for lineno, value in iter_jsonl(path, on_error, skips):
        try:
            entity = parse_entity_label(value, path, f"line {lineno}")
            if entity.id in first_line:
                raise DataFormatError(path, f"line {lineno}", "each entity id once",
                                      f"{entity.id} again (first on line {first_line[entity.id]})")
        except DataFormatError as error:
            handle(error, on_error, skips)
            continue
        first_line[entity.id] = lineno
        if wanted is None or entity.id in wanted:
            entities[entity.id] = entity
    return entities


def entity_label_to_dict(entity: EntityLabel) -> dict[str, Any]:
    """The JSON object of one line; ``type``/``description`` only when they are set."""
    record: dict[str, Any] = {"id": entity.id, "label": entity.label,
                              "aliases": list(entity.aliases)}
    if entity.type is not None:
        record["type"] = entity.type
    if entity.description is not None:
        record["description"] = entity.description
    return record


def write_entity_labels(path: str | Path,
                        entities: Iterable[EntityLabel] | Mapping[str, EntityLabel]) -> Path:
    """Atomically write entities as JSON lines (UTF-8, non-ASCII kept), in the given order.

    Raises ``ValueError`` for an id that is not ``Q<digits>`` or an id given twice.
    """
    values = entities.values() if isinstance(entities, Mapping) else entities
    seen: set[str] = set()

    def records() -> Iterator[dict[str, Any]]:
        for entity in values:
            if not _QID.fullmatch(entity.id):
                raise ValueError(f"entity id must be a Wikidata item id (Q<digits>): {entity.id!r}")
            if entity.id in seen:
                raise ValueError(f"entity id {entity.id} given twice")
            seen.add(entity.id)
            yield entity_label_to_dict(entity)

    return write_jsonl(path, records())
