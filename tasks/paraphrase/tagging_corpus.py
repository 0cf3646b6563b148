"""Annotated sentences and Flair column corpora: the data format of the offline taggers.

A sentence carries character spans for entities (OntoNotes classes) and phrase chunks; it is
tokenised exactly as ``flair.data.Sentence`` tokenises text (segtok), and labels go from
character spans to tokens, so training and prediction see the same tokens. Inside a noun phrase
the CoNLL-2000 base-NP rules split the phrase after a possessive ``'s`` and around a
preposition (``[NP University] [PP of] [NP Dublin]``), a conjunction or punctuation inside a
name (``[NP The River] and [NP the Solitude]``), so names with such words are chunked the way
a CoNLL-trained chunker (Flair's) chunks them.

:func:`render_template` turns a bracket template with slots into an annotated sentence::

    [NP {s}] [VP was born] [PP in] [NP {o}] , [NP {o_country}] [PP on] [NP {birth}] .

Corpora are written as Flair column files (:func:`write_column_corpus`): ``train.txt``,
``dev.txt``, ``test.txt`` with columns ``text ner chunk`` and a ``manifest.json``; splits keep
the sentences of one group (subject) together (:func:`split_by_group`). Gold sentences of the
demo world come from :mod:`tasks.demo.tagging_sentences`, silver sentences of real text from
:mod:`tasks.paraphrase.silver_tagging`.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, TypeVar

from tasks.io.atomic import atomic_write, write_json

#: Column layout of the written corpora (Flair ``ColumnCorpus`` column format).
COLUMNS: dict[int, str] = {0: "text", 1: "ner", 2: "chunk"}
#: Tag types (Flair label types) of the two taggers.
NER_TAG_TYPE = "ner"
CHUNK_TAG_TYPE = "chunk"
SPLITS = ("train", "dev", "test")

#: Words that split a CoNLL-2000 base noun phrase (as ``PP``; ``O`` for the conjunctions).
_NP_PREPOSITIONS = frozenset({"of", "with", "at", "in", "for", "on", "from", "by", "to",
                              "under", "over", "into", "without", "near", "beyond", "after"})
_NP_CONJUNCTIONS = frozenset({"and", "or", "&", "nor", "but"})
_NP_PUNCT = frozenset({",", ":", ";", "(", ")", "-", "--", "\u2013", "\u2014", '"', "?", "!"})
_NP_POSSESSIVES = frozenset({"'s", "'", "\u2019s", "\u2019"})


# -- annotated sentences ----------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class CharSpan:
    """A labelled character span ``text[start:end]``."""

    start: int
    end: int
    label: str


@dataclass(frozen=True)
class AnnotatedSentence:
    """A sentence with its entity and chunk spans (character offsets into ``text``).

    ``group`` names what the sentence is about (the subject's id): splits keep groups whole.
    """

    text: str
    entities: tuple[CharSpan, ...]
    chunks: tuple[CharSpan, ...]
    group: str = ""
    source: str = "demo-kb"

    def tokens(self) -> list[tuple[str, int, int]]:
        """``(token, start, end)`` as ``flair.data.Sentence(text)`` tokenises the text."""
        return tokenize_with_offsets(self.text)

    def bio_rows(self) -> list[tuple[str, str, str]]:
        """``(token, ner_tag, chunk_tag)`` rows with BIO tags (CoNLL column file lines).

        A token belongs to the span its first character falls in; noun phrases are then split
        by the CoNLL-2000 base-NP rules (see the module docstring).
        """
        tokens = self.tokens()
        ner = _bio_for_tokens(tokens, self.entities)
        chunk = _split_noun_phrases([t for t, _, _ in tokens],
                                    _bio_for_tokens(tokens, self.chunks))
        return [(t, n, c) for (t, _, _), n, c in zip(tokens, ner, chunk, strict=True)]


def tokenize_with_offsets(text: str) -> list[tuple[str, int, int]]:
    """Tokens of ``text`` as Flair's default ``SegtokTokenizer`` makes them, with offsets.

    Offsets are found the way ``flair.data.Sentence`` finds them (each token searched from the
    end of the previous one).
    """
    from segtok.segmenter import split_single
    from segtok.tokenizer import split_contractions, word_tokenizer

    words: list[str] = []
    for sentence in split_single(text):
        words.extend(split_contractions(word_tokenizer(sentence)))
    result = []
    cursor = 0
    for word in filter(None, words):
        start = text.find(word, cursor)
        if start < 0:  # pragma: no cover - segtok only splits, it never rewrites characters
            raise ValueError(f"token {word!r} not found in {text!r} after offset {cursor}")
        result.append((word, start, start + len(word)))
        cursor = start + len(word)
    return result


def _bio_for_tokens(tokens: Sequence[tuple[str, int, int]],
                    spans: Iterable[CharSpan]) -> list[str]:
    tags = ["O"] * len(tokens)
    for span in sorted(spans, key=lambda s: (s.start, s.end)):
        inside = [i for i, (_, start, _) in enumerate(tokens) if span.start <= start < span.end]
        for n, i in enumerate(inside):
            tags[i] = ("B-" if n == 0 else "I-") + span.label
    return tags


def _split_noun_phrases(words: Sequence[str], tags: Sequence[str]) -> list[str]:
    """Apply the CoNLL-2000 base-NP rules inside ``NP`` chunks (see the module docstring)."""
    out = list(tags)
    restart = False
    for i, (word, tag) in enumerate(zip(words, tags, strict=True)):
        if not tag.endswith("-NP"):
            restart = False
            continue
        lower = word.lower()
        if tag.startswith("I-") and (lower in _NP_PREPOSITIONS or lower == "to"):
            out[i], restart = "B-PP", True
        elif tag.startswith("I-") and (lower in _NP_CONJUNCTIONS or word in _NP_PUNCT):
            out[i], restart = "O", True
        elif restart:
            out[i], restart = "B-NP", False
        if word in _NP_POSSESSIVES and i + 1 < len(words) and tags[i + 1] == "I-NP":
            restart = True
    return out


# -- templates ----------------------------------------------------------------------------------
_TEMPLATE_PART = re.compile(r"\[(?P<chunk>[A-Z]+) (?P<body>[^\]]*)\]|(?P<bare>\S+)")
_SLOT = re.compile(r"^\{(\w+)\}$")
_NO_SPACE_BEFORE = frozenset({",", ".", ";", ":", "?", "!", ")", "'s"})


@lru_cache(maxsize=4096)
def _template_words(template: str) -> tuple[tuple[str, str | None, bool, int], ...]:
    """``(word or slot name, chunk label, is a slot, part index)`` of each word of a template.

    Remembered per template: the demo world renders its few dozen templates ~250k times for
    the 51,770-passage world, and parsing them each time was ~5 s of its corpus's 26 s.
    """
    words = []
    for n, match in enumerate(_TEMPLATE_PART.finditer(template)):
        chunk = match.group("chunk")
        for word in match.group("body").split() if chunk else [match.group("bare")]:
            slot = _SLOT.match(word)
            words.append((slot.group(1) if slot else word, chunk, slot is not None, n))
    return tuple(words)


@lru_cache(maxsize=4096)
def template_slots(template: str) -> frozenset[str]:
    """The slot names of a template: :func:`render_template` renders it exactly when the
    slots given hold every one of them."""
    return frozenset(word for word, _, is_slot, _ in _template_words(template) if is_slot)


def render_template(template: str, slots: dict[str, tuple[str, str | None]],
                    group: str = "") -> AnnotatedSentence | None:
    """One sentence from ``template`` and slot values; ``None`` when a slot has no value.

    ``a`` before a vowel becomes ``an``; a sentence starts with a capital letter.
    """
    pieces: list[tuple[str, str | None, str | None]] = []  # (text, chunk label, NER label)
    chunk_ids: list[int] = []
    for word, chunk, is_slot, n in _template_words(template):
        if is_slot:
            if word not in slots:
                return None
            text, label = slots[word]
            pieces.append((text, chunk, label))
        else:
            pieces.append((word, chunk, None))
        chunk_ids.append(n)
    for i, (text, chunk, label) in enumerate(pieces[:-1]):
        if text.lower() == "a" and label is None and pieces[i + 1][0][:1].lower() in "aeiou":
            pieces[i] = ("an" if text == "a" else "An", chunk, label)
    text = ""
    entities: list[CharSpan] = []
    chunk_spans: dict[int, list[int]] = {}
    chunk_labels: dict[int, str] = {}
    for i, (piece, chunk, label) in enumerate(pieces):
        if i == 0:
            piece = piece[:1].upper() + piece[1:]
        elif piece not in _NO_SPACE_BEFORE:
            text += " "
        start = len(text)
        text += piece
        if label is not None:
            entities.append(CharSpan(start, len(text), label))
        if chunk is not None and chunk != "O":
            span = chunk_spans.setdefault(chunk_ids[i], [start, len(text)])
            span[1] = len(text)
            chunk_labels[chunk_ids[i]] = chunk
    chunks = tuple(CharSpan(s, e, chunk_labels[k]) for k, (s, e) in sorted(chunk_spans.items()))
    return AnnotatedSentence(text, tuple(entities), chunks, group=group)


class _Grouped(Protocol):
    @property
    def group(self) -> str: ...


Grouped = TypeVar("Grouped", bound=_Grouped)


def split_by_group(sentences: Sequence[Grouped], dev_share: float = 0.1,
                   test_share: float = 0.1, seed: int = 0) -> dict[str, list[Grouped]]:
    """Train/dev/test splits that keep all sentences of one ``group`` (subject) together
    (anything with a ``group``: an :class:`AnnotatedSentence`, or a sentence still to be
    rendered)."""
    groups = sorted({s.group for s in sentences})
    random.Random(seed).shuffle(groups)
    n_dev = round(len(groups) * dev_share)
    n_test = round(len(groups) * test_share)
    where = {g: "dev" for g in groups[:n_dev]}
    where.update({g: "test" for g in groups[n_dev:n_dev + n_test]})
    splits: dict[str, list[Grouped]] = {name: [] for name in SPLITS}
    for sentence in sentences:
        splits[where.get(sentence.group, "train")].append(sentence)
    return splits


# -- column files -------------------------------------------------------------------------------
def write_column_corpus(splits: dict[str, Sequence[AnnotatedSentence]], out_dir: str | Path,
                        description: str = "") -> dict[str, Any]:
    """Write ``train.txt``/``dev.txt``/``test.txt`` (columns ``text ner chunk``, BIO tags,
    blank line between sentences) and ``manifest.json``; return the manifest."""
    out_dir = Path(out_dir)
    counts: dict[str, Any] = {}
    ner_labels: Counter[str] = Counter()
    chunk_labels: Counter[str] = Counter()
    for name in SPLITS:
        sentences = splits.get(name, ())
        with atomic_write(out_dir / f"{name}.txt") as handle:
            for sentence in sentences:
                for token, ner, chunk in sentence.bio_rows():
                    if any(ch.isspace() for ch in token):  # pragma: no cover - segtok splits
                        raise ValueError(f"token with white space {token!r} in {sentence.text!r}")
                    handle.write(f"{token} {ner} {chunk}\n")
                    if ner.startswith("B-"):
                        ner_labels[ner[2:]] += 1
                    if chunk.startswith("B-"):
                        chunk_labels[chunk[2:]] += 1
                handle.write("\n")
        counts[name] = len(sentences)
    manifest = {
        "kind": "tagging-corpus",
        "columns": {str(k): v for k, v in COLUMNS.items()},
        "tag_format": "BIO",
        "sentences": counts,
        "ner_spans": dict(sorted(ner_labels.items())),
        "chunk_spans": dict(sorted(chunk_labels.items())),
        "description": description,
    }
    write_json(out_dir / "manifest.json", manifest, indent=2)
    return manifest


def read_column_sentences(path: str | Path) -> Iterator[list[tuple[str, str, str]]]:
    """The sentences of a column file as lists of ``(token, ner, chunk)`` rows."""
    rows: list[tuple[str, str, str]] = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            if rows:
                yield rows
            rows = []
            continue
        parts = line.split(" ")
        if len(parts) != len(COLUMNS):
            raise ValueError(f"{path}, line {number}: expected {len(COLUMNS)} columns "
                             f"(text ner chunk), got {len(parts)}: {line!r}")
        rows.append((parts[0], parts[1], parts[2]))
    if rows:
        yield rows


def dump_sentences(sentences: Iterable[AnnotatedSentence], path: str | Path) -> None:
    """Write annotated sentences as JSON lines (text, entity and chunk spans)."""
    with atomic_write(path) as handle:
        for s in sentences:
            handle.write(json.dumps({
                "text": s.text, "group": s.group, "source": s.source,
                "entities": [[e.start, e.end, e.label] for e in s.entities],
                "chunks": [[c.start, c.end, c.label] for c in s.chunks],
            }, ensure_ascii=False) + "\n")
