"""T-REx documents of the demo world: one per article about an entity.

Each document carries the article text, word and sentence boundaries, every entity mention and
one triple per fact stated in a sentence, with subject and object boundaries that slice the text
to their surface forms (a pronoun or "the band" when the subject is referred to by coreference).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from tasks.demo.articles import Article
from tasks.demo.prose import COREF, Mention

ENTITY_URI = "http://www.wikidata.org/entity/"
PROPERTY_URI = "http://www.wikidata.org/prop/direct/"
_WORD = re.compile(r"\w+|[^\w\s]")


def _element(m: Mention) -> dict[str, Any]:
    return {"boundaries": [m.start, m.end], "surfaceform": m.surface,
            "uri": ENTITY_URI + m.entity, "annotator": m.annotator}


def trex_document(article: Article) -> dict[str, Any]:
    """The T-REx dict of one article about an entity."""
    assert article.entity is not None
    text = article.text
    words = [m.span() for m in _WORD.finditer(text)]  # pairs: JSON writes them as arrays
    sentences, entities, triples = [], [], []
    offset = 0
    for index, sentence in enumerate(article.sentences):
        sentences.append([offset, offset + len(sentence.text)])
        offset += len(sentence.text) + 1
        entities.extend(_element(m) for m in sentence.mentions)
        for fact, subject_index, object_index in sentence.facts:
            subject = sentence.mentions[subject_index]
            coref = subject.annotator == COREF
            triples.append({
                "sentence_id": index,
                "subject": _element(subject),
                "predicate": {"boundaries": None, "surfaceform": None,
                              "uri": PROPERTY_URI + fact.relation,
                              "annotator": "NoSubject-Triple-aligner" if coref
                              else "Wikidata_Property_Linker"},
                "object": _element(sentence.mentions[object_index]),
                "dependency_path": None,
                "confidence": 0.75 if coref else 1.0,
                "annotator": "NoSubject-Triple-aligner" if coref else "SPOAligner",
            })
    return {
        "docid": article.entity,
        "uri": ENTITY_URI + article.entity,
        "title": article.title,
        "text": text,
        "words_boundaries": words,
        "sentences_boundaries": sentences,
        "entities": entities,
        "triples": triples,
    }


def trex_chunks(articles: list[Article], per_file: int) -> Iterator[tuple[str, list[dict]]]:
    """``(file name, documents)`` for the articles about entities, ``per_file`` a file."""
    documents = [trex_document(a) for a in articles if a.entity is not None]
    for start in range(0, len(documents), per_file):
        chunk = documents[start:start + per_file]
        yield f"re-nlg_{start}-{start + len(chunk)}.json", chunk
