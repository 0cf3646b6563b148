"""Adversarial suggestions (Gan & Ng, 2019): phrases from the context that a paraphraser can
insert into a question to make it point at the wrong sentence.

For one SQuAD question (its context and its gold answer with ``answer_start``):

1. **Answer type.** The NER tagger labels the context; the answer's type is the label of the
   entity overlapping the answer span the most (ties: the first). When no entity overlaps, the
   answer text is tagged on its own; when that finds nothing either, the question gets no
   suggestions (``reason`` says so).
2. **Distractor sentences.** A sentence of the context is a candidate when it holds an entity
   of the answer's type that shares no word with the answer. Words are compared after SQuAD
   answer normalisation (lower case, no punctuation, no articles), so the distractor has token
   F1 zero with the answer; entities overlapping the answer span are never distractors.
3. **Suggestions.** The chunker chunks the candidate sentences; noun and verb phrases (labels
   ``NP``/``VP``, any case) of at least two word tokens (clitics such as ``'s`` do not count)
   that do not overlap the answer span (nor any other occurrence of the answer text in the
   context) are the suggestions, in context order, each phrase text once (case-insensitive).

:func:`select_suggestions` is the pure core over tagger outputs (character spans);
:func:`adversarial_suggestions` runs it with taggers for one question and
:func:`suggest_for_questions` for many, tagging each context once and batching the taggers'
calls. Taggers are passed in: Flair ``SequenceTagger`` objects (pretrained or the offline demo
taggers of :mod:`models.flair_taggers`) or anything with the same ``predict(sentences,
mini_batch_size=...)`` and ``label_type``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from models.flair_import import import_flair
from tasks.evaluation.squad_metrics import normalize_answer
from tasks.io.atomic import atomic_write

#: Chunk labels kept as suggestions (noun and verb phrases).
PHRASE_LABELS = ("NP", "VP")
MIN_WORDS = 2


class FlairLikeTagger(Protocol):
    """What the taggers must offer: Flair's ``SequenceTagger`` interface, as far as used."""

    label_type: str

    def predict(self, sentences: Any, mini_batch_size: int = ...) -> Any: ...


@dataclass(frozen=True, slots=True)
class TaggedSpan:
    """A tagger's span: character offsets into the context (``end`` exclusive), its label and
    how many of its tokens are words (hold a letter or digit and are no clitic like ``'s``)."""

    start: int
    end: int
    label: str
    text: str
    words: int


@dataclass(frozen=True, slots=True)
class Suggestion:
    """One adversarial suggestion: a phrase of a distractor sentence."""

    text: str
    label: str
    start: int
    end: int
    sentence: int


@dataclass(frozen=True)
class AdversarialResult:
    """Suggestions for one question, with what they were derived from."""

    question_id: str | None
    answer_text: str
    answer_type: str | None
    answer_entity: TaggedSpan | None
    distractors: tuple[TaggedSpan, ...]
    suggestions: tuple[Suggestion, ...]
    reason: str = ""

    @property
    def texts(self) -> list[str]:
        """The suggestion phrases."""
        return [s.text for s in self.suggestions]

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dictionary."""
        return asdict(self)


# -- sentences and tagging ---------------------------------------------------------------------
def split_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans ``(start, end)`` of ``text`` (segtok's splitter, white space trimmed)."""
    from segtok.segmenter import split_single

    spans = []
    cursor = 0
    for sentence in split_single(text):
        sentence = sentence.strip()
        if not sentence:
            continue
        start = text.find(sentence, cursor)
        if start < 0:  # pragma: no cover - segtok returns substrings of the text
            raise ValueError(f"sentence {sentence!r} not found in the text after {cursor}")
        spans.append((start, start + len(sentence)))
        cursor = start + len(sentence)
    return spans


def _is_word(token_text: str) -> bool:
    """A word token holds a letter or digit and is no clitic (``'s``, ``n't``, ``'re``)."""
    return (any(ch.isalnum() for ch in token_text)
            and not token_text.startswith(("'", "\u2019")) and token_text.lower() != "n't")


def tag_spans(tagger: FlairLikeTagger, texts: Sequence[str], offsets: Sequence[int] | None = None,
              mini_batch_size: int = 32) -> list[list[TaggedSpan]]:
    """Run a Flair-like tagger over ``texts``; its spans with offsets shifted by ``offsets``."""
    import_flair()
    from flair.data import Sentence

    offsets = offsets if offsets is not None else [0] * len(texts)
    sentences = [Sentence(text) for text in texts]
    to_tag = [s for s in sentences if len(s) > 0]
    if to_tag:
        tagger.predict(to_tag, mini_batch_size=mini_batch_size)
    result = []
    for sentence, text, offset in zip(sentences, texts, offsets, strict=True):
        spans = []
        for span in sentence.get_spans(tagger.label_type):
            start, end = span.start_position, span.end_position
            spans.append(TaggedSpan(offset + start, offset + end,
                                    span.get_label(tagger.label_type).value, text[start:end],
                                    sum(_is_word(t.text) for t in span.tokens)))
        result.append(spans)
    return result


# -- the pure core ------------------------------------------------------------------------------
def _words(text: str) -> set[str]:
    return set(normalize_answer(text).split())


def _overlaps(start: int, end: int, spans: Iterable[tuple[int, int]]) -> bool:
    return any(start < b and a < end for a, b in spans)


def answer_spans(context: str, answer_text: str, answer_start: int) -> list[tuple[int, int]]:
    """The gold answer span plus every other occurrence of the answer text in the context."""
    spans = [(answer_start, answer_start + len(answer_text))]
    if answer_text:
        found = context.find(answer_text)
        while found >= 0:
            if found != answer_start:
                spans.append((found, found + len(answer_text)))
            found = context.find(answer_text, found + 1)
    return spans


def answer_entity(entities: Sequence[TaggedSpan], answer_start: int,
                  answer_end: int) -> TaggedSpan | None:
    """The entity overlapping ``[answer_start, answer_end)`` the most (first on ties)."""
    best, best_overlap = None, 0
    for entity in entities:
        overlap = min(entity.end, answer_end) - max(entity.start, answer_start)
        if overlap > best_overlap:
            best, best_overlap = entity, overlap
    return best


def distractor_entities(entities: Sequence[TaggedSpan], answer_type: str, answer_text: str,
                        answer_start: int) -> list[TaggedSpan]:
    """Entities of ``answer_type`` that share no (normalised) word with the answer and do not
    overlap the answer span."""
    answer_words = _words(answer_text)
    answer_end = answer_start + len(answer_text)
    result = []
    for entity in entities:
        words = _words(entity.text)
        if (entity.label == answer_type and words and not words & answer_words
                and not _overlaps(entity.start, entity.end, [(answer_start, answer_end)])):
            result.append(entity)
    return result


def select_suggestions(context: str, answer_text: str, answer_start: int,
                       sentences: Sequence[tuple[int, int]], entities: Sequence[TaggedSpan],
                       chunks: dict[int, Sequence[TaggedSpan]], answer_type: str | None,
                       *, phrase_labels: Sequence[str] = PHRASE_LABELS,
                       min_words: int = MIN_WORDS,
                       question_id: str | None = None) -> AdversarialResult:
    """Suggestions from tagger outputs (all offsets into ``context``).

    ``sentences`` are the context's sentence spans, ``entities`` the NER spans of the whole
    context, ``chunks`` the chunk spans of (at least) the distractor sentences by sentence
    index, ``answer_type`` the answer's entity label (from :func:`answer_entity`, or from
    tagging the answer alone when no context entity overlaps it).
    """
    entity = answer_entity(entities, answer_start, answer_start + len(answer_text))

    def result(distractors=(), suggestions=(), reason=""):
        return AdversarialResult(question_id, answer_text, answer_type, entity,
                                 tuple(distractors), tuple(suggestions), reason)

    if answer_type is None:
        return result(reason="the answer has no entity type")
    distractors = distractor_entities(entities, answer_type, answer_text, answer_start)
    indexes = distractor_sentences(sentences, distractors)
    if not indexes:
        return result(distractors, reason=f"no sentence with another {answer_type} entity")
    labels = tuple(dict.fromkeys(label.upper() for label in phrase_labels))
    avoid = answer_spans(context, answer_text, answer_start)
    seen: set[str] = set()
    suggestions = []
    for index in indexes:
        for chunk in sorted(chunks.get(index, ()), key=lambda c: (c.start, c.end)):
            key = " ".join(chunk.text.lower().split())
            if (chunk.label.upper() in labels and chunk.words >= min_words
                    and not _overlaps(chunk.start, chunk.end, avoid) and key not in seen):
                seen.add(key)
                suggestions.append(Suggestion(chunk.text, chunk.label.upper(), chunk.start,
                                              chunk.end, index))
    reason = "" if suggestions else (f"no {'/'.join(labels)} phrase of at least {min_words} "
                                     "words outside the answer")
    return result(distractors, suggestions, reason)


def distractor_sentences(sentences: Sequence[tuple[int, int]],
                         distractors: Iterable[TaggedSpan]) -> list[int]:
    """Indexes of the sentences holding a distractor entity (in order)."""
    starts = [d.start for d in distractors]
    return [i for i, (a, b) in enumerate(sentences) if any(a <= s < b for s in starts)]


# -- with taggers -------------------------------------------------------------------------------
@dataclass
class _TaggedContext:
    sentences: list[tuple[int, int]]
    entities: list[TaggedSpan]
    chunks: dict[int, list[TaggedSpan]]


def _tag_contexts(contexts: Sequence[str], ner: FlairLikeTagger,
                  mini_batch_size: int) -> list[_TaggedContext]:
    texts, offsets, owners = [], [], []
    tagged = []
    for n, context in enumerate(contexts):
        sentences = split_sentences(context)
        tagged.append(_TaggedContext(sentences, [], {}))
        for start, end in sentences:
            texts.append(context[start:end])
            offsets.append(start)
            owners.append(n)
    for owner, spans in zip(owners, tag_spans(ner, texts, offsets, mini_batch_size), strict=True):
        tagged[owner].entities.extend(spans)
    return tagged


def _answer_types(items: Sequence[tuple[str, int, str]], tagged: Sequence[_TaggedContext],
                  ner: FlairLikeTagger, mini_batch_size: int) -> list[str | None]:
    """Answer types for ``(answer_text, answer_start, context index)`` items."""
    types: list[str | None] = []
    missing: list[int] = []
    for n, (text, start, owner) in enumerate(items):
        entity = answer_entity(tagged[owner].entities, start, start + len(text))
        types.append(entity.label if entity else None)
        if entity is None and text.strip():
            missing.append(n)
    if missing:
        alone = tag_spans(ner, [items[n][0] for n in missing], None, mini_batch_size)
        for n, spans in zip(missing, alone, strict=True):
            types[n] = spans[0].label if spans else None
    return types


def suggest_for_questions(questions: Iterable[Any], ner: FlairLikeTagger,
                          chunker: FlairLikeTagger, *, phrase_labels: Sequence[str] = PHRASE_LABELS,
                          min_words: int = MIN_WORDS,
                          mini_batch_size: int = 32) -> list[AdversarialResult]:
    """Suggestions for SQuAD questions (``tasks.io.squad.SquadQuestion``: the first gold answer
    is used). Each distinct context is NER-tagged once and each distractor sentence chunked
    once; results are in question order."""
    questions = list(questions)
    contexts: dict[str, int] = {}
    for q in questions:
        contexts.setdefault(q.context, len(contexts))
    context_list = list(contexts)
    tagged = _tag_contexts(context_list, ner, mini_batch_size)
    items = []
    for q in questions:
        if not q.answers:
            raise ValueError(f"question {q.id!r} has no gold answer")
        items.append((q.answers[0].text, q.answers[0].answer_start, contexts[q.context]))
    types = _answer_types(items, tagged, ner, mini_batch_size)
    needed: set[tuple[int, int]] = set()
    for (text, start, owner), answer_type in zip(items, types, strict=True):
        if answer_type is None:
            continue
        t = tagged[owner]
        distractors = distractor_entities(t.entities, answer_type, text, start)
        needed.update((owner, i) for i in distractor_sentences(t.sentences, distractors)
                      if i not in t.chunks)
    order = sorted(needed)
    texts = [context_list[o][slice(*tagged[o].sentences[i])] for o, i in order]
    offsets = [tagged[o].sentences[i][0] for o, i in order]
    for (owner, index), spans in zip(order, tag_spans(chunker, texts, offsets, mini_batch_size),
                                     strict=True):
        tagged[owner].chunks[index] = spans
    results = []
    for q, (text, start, owner), answer_type in zip(questions, items, types, strict=True):
        t = tagged[owner]
        results.append(select_suggestions(
            q.context, text, start, t.sentences, t.entities, t.chunks, answer_type,
            phrase_labels=phrase_labels, min_words=min_words, question_id=q.id))
    return results


def adversarial_suggestions(context: str, answer_text: str, answer_start: int,
                            ner: FlairLikeTagger, chunker: FlairLikeTagger, *,
                            question_id: str | None = None,
                            phrase_labels: Sequence[str] = PHRASE_LABELS,
                            min_words: int = MIN_WORDS) -> AdversarialResult:
    """Suggestions for one question given its context and gold answer (see the module
    docstring). Raises ``ValueError`` when ``answer_start`` does not point at the answer."""
    if context[answer_start:answer_start + len(answer_text)] != answer_text:
        raise ValueError(f"answer_start {answer_start} does not point at {answer_text!r} in the "
                         f"context (found {context[answer_start:answer_start + 40]!r})")
    from tasks.io.squad import SquadAnswer, SquadQuestion

    question = SquadQuestion(question_id or "", "", (SquadAnswer(answer_text, answer_start),),
                             context, "")
    result = suggest_for_questions([question], ner, chunker, phrase_labels=phrase_labels,
                                   min_words=min_words)[0]
    return replace(result, question_id=question_id)


def write_suggestions(results: Iterable[AdversarialResult], path: str | Path) -> int:
    """Write results as JSON lines (one question per line); return how many."""
    count = 0
    with atomic_write(path) as handle:
        for result in results:
            handle.write(json.dumps(result.to_json(), ensure_ascii=False) + "\n")
            count += 1
    return count
