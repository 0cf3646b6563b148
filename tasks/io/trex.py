"""T-REx (Elsahar et al., 2018) ``re-nlg_*.json`` files: streaming reader (the writer is
:mod:`tasks.io.trex_write`).

A file is one JSON array of documents (DBpedia abstracts aligned with Wikidata triples)::

    {"docid", "uri": "http://www.wikidata.org/entity/Q228", "title", "text",
     "words_boundaries": [[s, e], ...], "sentences_boundaries": [[s, e], ...],
     "entities": [{"boundaries": [s, e], "surfaceform", "uri", "annotator"}],
     "triples": [{"sentence_id", "subject": {...}, "predicate": {"boundaries": null | [s, e],
                  "surfaceform": null | str, "uri": "http://www.wikidata.org/prop/direct/P19",
                  "annotator"}, "object": {...}, "dependency_path", "confidence", "annotator"}]}

Files are hundreds of MB: documents are streamed with ijson, one at a time. Records are named by
their 0-based index in the array (``document 12``) and their ``docid``.

Boundaries are ``[start, end)`` character offsets into ``text``. T-REx was built with Java, so
an offset may count UTF-16 code units: the upper limit checked is the text's UTF-16 length,
which equals ``len(text)`` unless the text holds characters outside the BMP.

Objects of a triple may be literals (dates, quantities) rather than Wikidata items:
:attr:`TrexEntity.wikidata_id` is ``None`` for those, and :attr:`TrexTriple.object_id` raises.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks.io._jsonstream import iter_json_array
from tasks.io.errors import DataFormatError, SkipCounter, handle, preview

WIKIDATA_ENTITY_PREFIX = "http://www.wikidata.org/entity/"
WIKIDATA_PROPERTY_PREFIX = "http://www.wikidata.org/prop/direct/"
_QID = re.compile(r"Q\d+")
_PID = re.compile(r"P\d+")
_NON_ENTITY = "subject and object that are Wikidata items (Q...)"


def _last_segment(uri: str) -> str:
    return uri.rstrip("/").rsplit("/", 1)[-1]


@dataclass(frozen=True, slots=True)
class TrexEntity:
    """An entity mention, or a triple's subject/predicate/object.

    ``boundaries`` are ``(start, end)`` offsets into the document text, or ``None`` where the
    aligner did not anchor the element in the text (often the predicate).
    """

    uri: str
    surfaceform: str | None
    boundaries: tuple[int, int] | None
    annotator: str | None

    @property
    def wikidata_id(self) -> str | None:
        """``Q228`` for ``http://www.wikidata.org/entity/Q228``; ``None`` for literals."""
        if not self.uri.startswith(WIKIDATA_ENTITY_PREFIX):
            return None
        last = self.uri[len(WIKIDATA_ENTITY_PREFIX):]
        return last if _QID.fullmatch(last) else None


@dataclass(frozen=True, slots=True)
class TrexTriple:
    """One Wikidata triple aligned to a sentence of a T-REx document.

    ``dependency_path`` is kept (it is ``null`` in most of T-REx) so documents round-trip.
    """

    sentence_id: int | None
    subject: TrexEntity
    predicate: TrexEntity
    object: TrexEntity
    confidence: float | None
    annotator: str | None
    dependency_path: str | None = None

    @property
    def relation(self) -> str:
        """The Wikidata property id (``P19``), the last path segment of the predicate URI.

        Raises :class:`DataFormatError` when the predicate is not a
        ``http://www.wikidata.org/prop/direct/P...`` URI.
        """
        return _property_id(self.predicate.uri)

    @property
    def subject_id(self) -> str:
        """The subject's Wikidata id (``Q228``); :class:`DataFormatError` for a literal."""
        return _item_id(self.subject, "subject")

    @property
    def object_id(self) -> str:
        """The object's Wikidata id (``Q228``); :class:`DataFormatError` for a literal."""
        return _item_id(self.object, "object")


@dataclass(frozen=True, slots=True)
class TrexDocument:
    """One T-REx document with its entity mentions and aligned triples."""

    docid: str
    uri: str
    title: str
    text: str
    words_boundaries: tuple[tuple[int, int], ...]
    sentences_boundaries: tuple[tuple[int, int], ...]
    entities: tuple[TrexEntity, ...]
    triples: tuple[TrexTriple, ...]


def _property_id(uri: str) -> str:
    last = uri[len(WIKIDATA_PROPERTY_PREFIX):]
    if not uri.startswith(WIKIDATA_PROPERTY_PREFIX) or not _PID.fullmatch(last):
        raise DataFormatError("T-REx predicate", "uri",
                              f"a Wikidata property URI {WIKIDATA_PROPERTY_PREFIX}P<digits>",
                              preview(uri))
    return last


def _item_id(element: TrexEntity, role: str) -> str:
    qid = element.wikidata_id
    if qid is None:
        raise DataFormatError(f"T-REx {role}", "uri",
                              f"a Wikidata item URI {WIKIDATA_ENTITY_PREFIX}Q<digits>",
                              preview(element.uri))
    return qid


class _Invalid(Exception):
    """A problem inside one document: (place inside the document, expected, got)."""

    def __init__(self, inner: str, expected: str, got: str | None = None):
        super().__init__(inner)
        self.inner, self.expected, self.got = inner, expected, got


def _utf16_length(text: str) -> int:
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def _boundaries(value: Any, limit: int, inner: str, nullable: bool) -> tuple[int, int] | None:
    if value is None:
        if nullable:
            return None
        raise _Invalid(inner, "[start, end] offsets", "null")
    if (not isinstance(value, list | tuple) or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise _Invalid(inner, "[start, end] integer offsets", preview(value))
    start, end = value
    if start > end:
        raise _Invalid(inner, "boundaries with start <= end", preview(value))
    if start < 0 or end > limit:
        raise _Invalid(inner, f"boundaries inside the text (0..{limit})", preview(value))
    return start, end


def _boundary_list(items: list[Any], limit: int, key: str) -> tuple[tuple[int, int], ...]:
    """:func:`_boundaries` of every (non-null) pair of ``items``, the well-formed pair checked
    inline: an abstract holds a pair per word, millions in a T-REx dump. Any other value goes
    through :func:`_boundaries`, which accepts or names it as before."""
    out = []
    for i, value in enumerate(items):
        if type(value) is list and len(value) == 2:
            start, end = value
            if type(start) is int and type(end) is int and 0 <= start <= end <= limit:
                out.append((start, end))
                continue
        out.append(_boundaries(value, limit, f"{key}[{i}]", False))
    return tuple(out)  # type: ignore[arg-type]


def _optional_str(value: Any, inner: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise _Invalid(inner, "a string or null", preview(value))


def _element(value: Any, limit: int, inner: str) -> TrexEntity:
    """:func:`_checked_element`, a well-formed element checked inline: an object of a non-empty
    URI, strings or nulls, and null or a pair of ints inside the text. A T-REx dump has millions
    (every entity mention and both ends of every triple). Anything else goes through
    :func:`_checked_element`, which accepts or names it as before."""
    if type(value) is dict:
        uri, surface = value.get("uri"), value.get("surfaceform")
        annotator, bounds = value.get("annotator"), value.get("boundaries")
        if (type(uri) is str and uri and (surface is None or type(surface) is str)
                and (annotator is None or type(annotator) is str)):
            if bounds is None:
                return TrexEntity(uri=uri, surfaceform=surface, boundaries=None,
                                  annotator=annotator)
            if type(bounds) is list and len(bounds) == 2:
                start, end = bounds
                if type(start) is int and type(end) is int and 0 <= start <= end <= limit:
                    return TrexEntity(uri=uri, surfaceform=surface, boundaries=(start, end),
                                      annotator=annotator)
    return _checked_element(value, limit, inner)


def _checked_element(value: Any, limit: int, inner: str) -> TrexEntity:
    if not isinstance(value, Mapping):
        raise _Invalid(inner, "an object {boundaries, surfaceform, uri, annotator}", preview(value))
    uri = value.get("uri")
    if not isinstance(uri, str) or not uri:
        raise _Invalid(f"{inner}.uri", "a non-empty URI string", preview(uri))
    return TrexEntity(
        uri=uri,
        surfaceform=_optional_str(value.get("surfaceform"), f"{inner}.surfaceform"),
        boundaries=_boundaries(value.get("boundaries"), limit, f"{inner}.boundaries", True),
        annotator=_optional_str(value.get("annotator"), f"{inner}.annotator"),
    )


def _triple(value: Any, limit: int, inner: str) -> TrexTriple:
    if not isinstance(value, Mapping):
        raise _Invalid(inner, "a triple object", preview(value))
    for key in ("subject", "predicate", "object"):
        if key not in value:
            raise _Invalid(inner, f"a triple with a {key!r} key", f"keys {sorted(value)}")
    predicate = _element(value["predicate"], limit, f"{inner}.predicate")
    try:
        _property_id(predicate.uri)
    except DataFormatError as error:
        raise _Invalid(f"{inner}.predicate.uri", error.expected, error.got) from None
    sentence_id = value.get("sentence_id")
    if sentence_id is not None and (not isinstance(sentence_id, int)
                                    or isinstance(sentence_id, bool)):
        raise _Invalid(f"{inner}.sentence_id", "an integer", preview(sentence_id))
    confidence = value.get("confidence")
    if confidence is not None:
        if not isinstance(confidence, int | float) or isinstance(confidence, bool):
            raise _Invalid(f"{inner}.confidence", "a number", preview(confidence))
        confidence = float(confidence)
    return TrexTriple(
        sentence_id=sentence_id,
        subject=_element(value["subject"], limit, f"{inner}.subject"),
        predicate=predicate,
        object=_element(value["object"], limit, f"{inner}.object"),
        confidence=confidence,
        annotator=_optional_str(value.get("annotator"), f"{inner}.annotator"),
        dependency_path=_optional_str(value.get("dependency_path"), f"{inner}.dependency_path"),
    )


def _list(value: Any, inner: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Invalid(inner, "a list", preview(value))
    return value


def _docid(value: Mapping[str, Any]) -> str | None:
    """The document's ``docid`` as a string; ``None`` when it is absent or null."""
    docid = value.get("docid")
    if docid is None:
        return None
    if isinstance(docid, int) and not isinstance(docid, bool):
        return str(docid)
    if isinstance(docid, str) and docid:
        return docid
    raise _Invalid("docid", "a non-empty string or an integer (or null)", preview(docid))


def parse_trex_document(value: Any, path: str | Path = "<T-REx>", index: int = 0) -> TrexDocument:
    """Validate one decoded T-REx document; :class:`DataFormatError` names file and index.

    A missing or null ``docid`` is taken from the last segment of ``uri``, and a missing or
    null ``title`` is ``""``; a ``docid`` that is not a non-empty string or an integer, or a
    ``title`` that is not a string, is an error.
    """
    docid: str | None = None
    where = f"document {index} (docid ?)"
    try:
        if not isinstance(value, Mapping):
            raise _Invalid("", "a document object", preview(value))
        docid = _docid(value)
        if docid is not None:
            where = f"document {index} (docid {docid!r})"
        missing = [key for key in ("uri", "text", "triples") if key not in value]
        if missing:
            raise _Invalid("", "a document with 'uri', 'text' and 'triples'",
                           f"no {', '.join(repr(k) for k in missing)}")
        text, uri = value["text"], value["uri"]
        if not isinstance(text, str):
            raise _Invalid("text", "a string", preview(text))
        if not isinstance(uri, str) or not uri:
            raise _Invalid("uri", "a non-empty URI string", preview(uri))
        title = value.get("title")
        if title is None:
            title = ""
        elif not isinstance(title, str):
            raise _Invalid("title", "a string or null", preview(title))
        limit = _utf16_length(text)
        bounds: dict[str, tuple[tuple[int, int], ...]] = {}
        for key in ("words_boundaries", "sentences_boundaries"):
            bounds[key] = _boundary_list(_list(value.get(key), key), limit, key)
        entities = tuple(_element(e, limit, f"entities[{i}]")
                         for i, e in enumerate(_list(value.get("entities"), "entities")))
        triples_value = value["triples"]
        if not isinstance(triples_value, list):
            raise _Invalid("triples", "a list", preview(triples_value))
        triples = tuple(_triple(t, limit, f"triples[{i}]") for i, t in enumerate(triples_value))
    except _Invalid as problem:
        place = f"{where}, {problem.inner}" if problem.inner else where
        raise DataFormatError(path, place, problem.expected, problem.got) from None
    return TrexDocument(
        docid=docid if docid is not None else _last_segment(uri),
        uri=uri,
        title=title,
        text=text,
        words_boundaries=bounds["words_boundaries"],
        sentences_boundaries=bounds["sentences_boundaries"],
        entities=entities,
        triples=triples,
    )


def iter_trex_documents(path: str | Path, on_error: str = "raise",
                        skips: SkipCounter | None = None) -> Iterator[TrexDocument]:
    """Stream the documents of one T-REx ``re-nlg_*.json`` file.

    A document that is not valid (missing ``triples``/``text``/``uri``, a predicate that is not
    a Wikidata property, boundaries outside the text or with start > end, ...) raises
    :class:`DataFormatError` naming the file, the document index and its ``docid``, or with
    ``on_error="skip"`` is counted in ``skips`` and left out. A file that is not a JSON array, or
    broken JSON, always raises (the stream cannot be resumed).
    """
    for index, value in iter_json_array(path, "a JSON array of T-REx documents"):
        try:
            document = parse_trex_document(value, path, index)
        except DataFormatError as error:
            handle(error, on_error, skips)
            continue
        yield document


def _paths(paths: Iterable[str | Path] | str | Path) -> list[Path]:
    if isinstance(paths, str | os.PathLike):
        return [Path(paths)]
    return [Path(p) for p in paths]


def iter_trex_triples(paths: Iterable[str | Path] | str | Path,
                      relations: set[str] | None = None, on_error: str = "raise",
                      skips: SkipCounter | None = None,
                      items_only: bool = True) -> Iterator[tuple[TrexDocument, TrexTriple]]:
    """Stream ``(document, triple)`` pairs from one or more T-REx files, in file order.

    ``relations`` keeps only triples whose relation (``P19``) is in the set. With
    ``items_only`` (the default) triples whose subject or object is a literal rather than a
    Wikidata item are left out, so ``subject_id``/``object_id`` always work on what is yielded;
    those triples are valid T-REx, so they never raise, but they are counted in ``skips`` when
    one is given. Invalid documents are handled as in :func:`iter_trex_documents`.
    """
    for path in _paths(paths):
        for document in iter_trex_documents(path, on_error, skips):
            for index, triple in enumerate(document.triples):
                if relations is not None and triple.relation not in relations:
                    continue
                if items_only and (triple.subject.wikidata_id is None
                                   or triple.object.wikidata_id is None):
                    if skips is not None:
                        skips.skip(DataFormatError(
                            path, f"document docid {document.docid!r}, triples[{index}]",
                            _NON_ENTITY, f"{triple.subject.uri} / {triple.object.uri}"))
                    continue
                yield document, triple
