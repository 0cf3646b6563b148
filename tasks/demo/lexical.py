"""A small lexical toolkit for building the training sets: answer matching (the evaluation's own
DPR ``has_answer``, so negatives never hold an answer the evaluation would credit) and a BM25
scorer over the passages (used to pick hard negatives, as DPR did with Lucene BM25)."""

from __future__ import annotations

import math
import unicodedata
from collections import Counter
from collections.abc import Sequence

import numpy as np
import regex

from tasks.evaluation.has_answer import passage_has_answer
from tasks.evaluation.tokenizer import words

_WORD = regex.compile(r"[\p{L}\p{N}\p{M}]+")
STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does", "for", "from", "had",
    "has", "have", "he", "her", "his", "how", "in", "is", "it", "its", "of", "on", "or", "she",
    "that", "the", "their", "they", "this", "to", "was", "were", "what", "when", "where", "which",
    "who", "whom", "whose", "why", "with"
})


def answer_tokens(text: str) -> list[str]:
    """DrQA simple tokenizer, lower-cased, on NFD-normalised text."""
    return words(unicodedata.normalize("NFD", text))


def has_answer(answers: Sequence[str], text: str) -> bool:
    """DPR's string-mode ``has_answer`` (answer tokens contiguous in the passage tokens)."""
    return passage_has_answer(list(answers), text, mode="dpr-string")


class AnswerMatcher:
    """:func:`has_answer` over a fixed set of passages, tokenising each passage once."""

    def __init__(self) -> None:
        self.forms: dict[int, str] = {}

    def __call__(self, answers: Sequence[str], key: int, text: str) -> bool:
        form = self.forms.get(key)
        if form is None:
            form = self.forms[key] = f" {' '.join(answer_tokens(text))} "
        return any(f" {' '.join(tokens)} " in form
                   for tokens in (answer_tokens(a) for a in answers) if tokens)


def terms(text: str) -> list[str]:
    """BM25 terms: lower-cased words without stop words."""
    return [w for word in _WORD.findall(text) if (w := word.lower()) not in STOPWORDS]


class BM25:
    """Okapi BM25 over a fixed list of documents (k1=0.9, b=0.4 as in Pyserini's defaults)."""

    def __init__(self, documents: Sequence[str], k1: float = 0.9, b: float = 0.4):
        self.n = len(documents)
        postings: dict[str, list[tuple[int, int]]] = {}
        lengths = np.zeros(self.n)
        for index, document in enumerate(documents):
            counts = Counter(terms(document))
            lengths[index] = sum(counts.values())
            for term, tf in counts.items():
                postings.setdefault(term, []).append((index, tf))
        average = float(lengths.mean()) if self.n else 1.0
        norm = k1 * (1 - b + b * lengths / max(average, 1e-9))
        self.index: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for term, items in postings.items():
            ids = np.fromiter((i for i, _ in items), dtype=np.int64, count=len(items))
            tfs = np.fromiter((tf for _, tf in items), dtype=np.float64, count=len(items))
            idf = math.log(1 + (self.n - len(items) + 0.5) / (len(items) + 0.5))
            self.index[term] = (ids, idf * tfs * (k1 + 1) / (tfs + norm[ids]))

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document for ``query``."""
        total = np.zeros(self.n)
        for term in dict.fromkeys(terms(query)):
            entry = self.index.get(term)
            if entry is not None:
                total[entry[0]] += entry[1]
        return total

    def top(self, query: str, k: int) -> list[tuple[int, float]]:
        """The ``k`` best ``(document index, score)``, best first (ties by index)."""
        scores = self.scores(query)
        k = min(k, self.n)
        if k <= 0:
            return []
        ordered = np.lexsort((np.arange(self.n), -scores))[:k]
        return [(int(i), float(scores[i])) for i in ordered]
