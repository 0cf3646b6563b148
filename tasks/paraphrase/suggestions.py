"""PPDB suggestions for a question (Gan & Ng, 2019, §3.1).

Every n-gram (n <= 6) of the lower-cased, PTB-tokenised question is looked up in the PPDB table,
except stop-word unigrams and n-grams that begin or end with punctuation; the paraphrases found
are the suggestions, ranked by ``PPDB2.0Score`` (best first, then alphabetically). A paraphrase
that already occurs in the question is no suggestion, and a suggestion reached from several
n-grams keeps its best score.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from tasks.io.errors import SkipCounter
from tasks.io.squad import read_squad
from tasks.io.tables import write_table
from tasks.paraphrase.ppdb_lookup import PPDBTable
from tasks.paraphrase.text import (
    contains_span,
    is_word,
    load_stopwords,
    ngrams,
    normalise_question,
    tokenize,
)

SUGGESTIONS_SCHEMA = pa.schema([
    ("qid", pa.string()), ("question", pa.string()), ("source", pa.string()),
    ("rank", pa.int32()), ("phrase", pa.string()), ("suggestion", pa.string()),
    ("score", pa.float64()),
])


@dataclass(frozen=True, slots=True)
class Suggestion:
    """A PPDB paraphrase ``suggestion`` of the question n-gram ``phrase`` (tokens start:end)."""

    phrase: str
    suggestion: str
    score: float
    start: int
    end: int


def candidate_phrases(tokens: Sequence[str], max_n: int = 6,
                      stopwords: frozenset[str] | None = None) -> list[tuple[int, int, str]]:
    """``(start, end, phrase)`` of the n-grams that are looked up, in order of position."""
    stopwords = load_stopwords() if stopwords is None else stopwords
    spans = []
    for start, end in ngrams(tokens, max_n):
        if not (is_word(tokens[start]) and is_word(tokens[end - 1])):
            continue
        if end - start == 1 and tokens[start] in stopwords:
            continue
        spans.append((start, end, " ".join(tokens[start:end])))
    return spans


def _rank(tokens: Sequence[str], spans: Sequence[tuple[int, int, str]],
          found: dict[str, list[tuple[str, float]]], limit: int | None) -> list[Suggestion]:
    best: dict[str, Suggestion] = {}
    for start, end, phrase in spans:
        for paraphrase, score in found.get(phrase, ()):
            if contains_span(tokens, paraphrase.split()):
                continue
            held = best.get(paraphrase)
            if held is None or score > held.score:
                best[paraphrase] = Suggestion(phrase, paraphrase, score, start, end)
    ranked = sorted(best.values(), key=lambda s: (-s.score, s.suggestion))
    return ranked[:limit] if limit else ranked


def suggest(question: str, table: PPDBTable, max_n: int = 6, limit: int | None = None,
            stopwords: frozenset[str] | None = None) -> list[Suggestion]:
    """The ranked suggestions of one question (at most ``limit``)."""
    return suggest_many([question], table, max_n, limit, stopwords)[0]


def suggest_many(questions: Iterable[str], table: PPDBTable, max_n: int = 6,
                 limit: int | None = None, stopwords: frozenset[str] | None = None,
                 batch_size: int = 256) -> list[list[Suggestion]]:
    """:func:`suggest` for many questions, with one table lookup per ``batch_size`` questions."""
    stopwords = load_stopwords() if stopwords is None else stopwords
    questions = list(questions)
    out: list[list[Suggestion]] = []
    for i in range(0, len(questions), batch_size):
        batch = [tokenize(q) for q in questions[i:i + batch_size]]
        spans = [candidate_phrases(tokens, max_n, stopwords) for tokens in batch]
        found = table.lookup({phrase for items in spans for _, _, phrase in items})
        out.extend(_rank(tokens, items, found, limit)
                   for tokens, items in zip(batch, spans, strict=True))
    return out


def suggest_for_squad(squad_path: Path, table_path: Path, out_path: Path, max_n: int = 6,
                      per_question: int | None = 5, max_per_phrase: int | None = None,
                      max_questions: int | None = None,
                      on_error: str = "raise") -> dict[str, Any]:
    """Suggestions for the questions of a SQuAD file, as a Parquet table; return the counts.

    One row per suggestion (``rank`` 1, 2, ...); a question without any suggestion has one row
    with ``rank`` 0 and a null suggestion, so every question reaches the paraphraser.
    """
    skips = SkipCounter(str(squad_path))
    questions = list(read_squad(squad_path, on_error=on_error, skips=skips).questions())
    if max_questions is not None:
        questions = questions[:max_questions]
    with PPDBTable(table_path, max_per_phrase) as table:
        ranked = suggest_many([q.question for q in questions], table, max_n, per_question)
    rows = []
    for question, suggestions in zip(questions, ranked, strict=True):
        source = normalise_question(question.question)
        base = {"qid": question.id, "question": question.question, "source": source}
        if not suggestions:
            rows.append({**base, "rank": 0, "phrase": None, "suggestion": None, "score": None})
        for rank, s in enumerate(suggestions, start=1):
            rows.append({**base, "rank": rank, "phrase": s.phrase, "suggestion": s.suggestion,
                         "score": s.score})
    write_table(out_path, rows, schema=SUGGESTIONS_SCHEMA)
    with_any = sum(1 for s in ranked if s)
    return {"questions": len(questions), "questions_with_suggestions": with_any,
            "suggestions": sum(len(s) for s in ranked), "squad_skipped": skips.total}
