"""T-REx (Elsahar et al., 2018) ``re-nlg_*.json`` files: the writer.

Documents go out in the release layout (see :mod:`tasks.io.trex`, which reads them back): one
JSON array, key order as in the release, written atomically.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tasks.io._jsonstream import write_json_array
from tasks.io.trex import TrexDocument, TrexEntity


def _element_to_dict(element: TrexEntity) -> dict[str, Any]:
    return {
        "boundaries": list(element.boundaries) if element.boundaries is not None else None,
        "surfaceform": element.surfaceform,
        "uri": element.uri,
        "annotator": element.annotator,
    }


def trex_document_to_dict(document: TrexDocument) -> dict[str, Any]:
    """The document in the T-REx file layout (key order as in the release)."""
    return {
        "docid": document.docid,
        "uri": document.uri,
        "title": document.title,
        "text": document.text,
        "words_boundaries": [list(b) for b in document.words_boundaries],
        "sentences_boundaries": [list(b) for b in document.sentences_boundaries],
        "entities": [_element_to_dict(e) for e in document.entities],
        "triples": [
            {
                "sentence_id": t.sentence_id,
                "subject": _element_to_dict(t.subject),
                "predicate": _element_to_dict(t.predicate),
                "object": _element_to_dict(t.object),
                "dependency_path": t.dependency_path,
                "confidence": t.confidence,
                "annotator": t.annotator,
            }
            for t in document.triples
        ],
    }


def write_trex_documents(path: str | Path,
                         documents: Iterable[Mapping[str, Any] | TrexDocument]) -> Path:
    """Atomically stream ``documents`` out as a T-REx JSON array (UTF-8, one document a line).

    Dicts are written as they are (they should follow the T-REx layout); :class:`TrexDocument`
    goes through :func:`trex_document_to_dict`.
    """
    return write_json_array(path, (
        trex_document_to_dict(d) if isinstance(d, TrexDocument) else dict(d) for d in documents
    ))
