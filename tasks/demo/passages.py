"""Cutting articles into DPR-style passages of (at most) 100 words.

DPR split each Wikipedia article into consecutive blocks of 100 words, the last block of an
article being shorter; passages keep the article title and get integer ids from 1. The articles
are shuffled first so that ids say nothing about popularity or kind. Each passage remembers the
mentions, facts and values that lie wholly inside it, with offsets into the passage text.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from tasks.demo.articles import Article
from tasks.demo.prose import Mention
from tasks.demo.world import Fact


@dataclass
class PassageRecord:
    """One passage with what it states (offsets into ``text``)."""

    id: int
    title: str
    text: str
    article: Article
    start: int
    end: int
    mentions: list[Mention] = field(default_factory=list)
    facts: list[tuple[Fact, Mention, Mention]] = field(default_factory=list)
    values: list[tuple[str, str, int, int]] = field(default_factory=list)


def _word_spans(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for word in text.split(" "):
        spans.append((start, start + len(word)))
        start += len(word) + 1
    return spans


def split_articles(articles: list[Article], passage_words: int,
                   rng: random.Random) -> list[PassageRecord]:
    """Passages of all ``articles`` (shuffled), ids from 1."""
    order = list(articles)
    rng.shuffle(order)
    passages: list[PassageRecord] = []
    for article in order:
        spans = _word_spans(article.text)
        sentence_spans = _sentence_spans(article)
        for first in range(0, len(spans), passage_words):
            window = spans[first:first + passage_words]
            start, end = window[0][0], window[-1][1]
            record = PassageRecord(len(passages) + 1, article.title, article.text[start:end],
                                   article, start, end)
            _collect(record, sentence_spans)
            passages.append(record)
    return passages


def _sentence_spans(article: Article) -> list[tuple[int, int]]:
    """Each sentence's ``[start, end)`` in the article (sentences are joined by one space)."""
    spans, offset = [], 0
    for sentence in article.sentences:
        spans.append((offset, offset + len(sentence.text)))
        offset += len(sentence.text) + 1
    return spans


def _collect(record: PassageRecord, sentence_spans: list[tuple[int, int]]) -> None:
    """The mentions, facts and values of the article inside the passage, at passage offsets.

    Every span lies inside its sentence, so the sentences that do not meet the passage are
    skipped (a long biography is split into several passages); the result is the same.
    """
    start, end = record.start, record.end

    def local(m: Mention) -> Mention:
        return Mention(m.start - start, m.end - start, m.entity, m.surface, m.annotator)

    for sentence, (first, last) in zip(record.article.sentences, sentence_spans, strict=True):
        if last < start:
            continue
        if first > end:
            break
        inside = [start <= m.start and m.end <= end for m in sentence.mentions]
        for m, ok in zip(sentence.mentions, inside, strict=True):
            if ok:
                record.mentions.append(local(m))
        for fact, subject_index, object_index in sentence.facts:
            if inside[subject_index] and inside[object_index]:
                record.facts.append((fact, local(sentence.mentions[subject_index]),
                                     local(sentence.mentions[object_index])))
        for entity, name, s, t in sentence.values:
            if start <= s and t <= end:
                record.values.append((entity, name, s - start, t - start))
