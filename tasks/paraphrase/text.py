"""Text helpers shared by the paraphrase steps: lower-cased PTB-style tokens, the stop list,
n-grams.

PPDB phrases are lower-cased Penn-Treebank tokens (``does n't``, ``john 's``), so questions are
tokenised the same way before their n-grams are looked up. The stop list lives in a data file
(``data/stopwords.txt``) so it can be read and changed without touching code.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

STOPWORDS_FILE = Path(__file__).with_name("data") / "stopwords.txt"
#: The special suggestion meaning "paraphrase without a suggestion".
NONE_TOKEN = "<none>"

_TOKEN = re.compile(
    r"""\w+(?=n't\b)              # "do" of "don't" (PTB splits the clitic off)
      | n't\b
      | '(?:s|re|ve|ll|d|m)\b     # 's 're 've 'll 'd 'm
      | (?:[^\W\d_]\.){2,}         # abbreviations with their dots: u.s. e.g.
      | \w+(?:[-.]\w+)*(?:'(?!(?:s|re|ve|ll|d|m|t)\b)\w+)*  # words, new-york, o'neill
      | [^\w\s]                   # any other single non-space character
    """,
    re.VERBOSE,
)
_HAS_WORD = re.compile(r"\w")


def tokenize(text: str) -> list[str]:
    """Lower-cased PTB-style tokens: ``"Who's born in New-York?"`` ->
    ``['who', "'s", 'born', 'in', 'new-york', '?']``."""
    return _TOKEN.findall(text.lower().replace("\u2019", "'"))


def normalise_question(text: str) -> str:
    """A question as the paraphraser sees it: lower case, single spaces (the released
    non-adversarial sets hold lower-cased raw text: ``what is ... buildings?``)."""
    return " ".join(text.lower().split())


def detokenize(tokens: Sequence[str]) -> str:
    """Join tokens with single spaces (the form PPDB phrases and the table keys have)."""
    return " ".join(tokens)


def normalise_phrase(phrase: str) -> str:
    """A phrase as a lookup key: lower-cased tokens joined by single spaces."""
    return detokenize(tokenize(phrase))


@functools.lru_cache(maxsize=4)
def load_stopwords(path: str | None = None) -> frozenset[str]:
    """The stop list (one lower-case word per line, ``#`` comments) of ``path`` or the default."""
    text = Path(path or STOPWORDS_FILE).read_text(encoding="utf-8")
    return frozenset(line.strip().lower() for line in text.splitlines()
                     if line.strip() and not line.lstrip().startswith("#"))


def is_word(token: str) -> bool:
    """True when the token holds at least one letter or digit (not punctuation only)."""
    return bool(_HAS_WORD.search(token))


def is_content(token: str, stopwords: frozenset[str]) -> bool:
    """A token that is neither a stop word nor punctuation."""
    return is_word(token) and token.lower() not in stopwords


def ngrams(tokens: Sequence[str], max_n: int) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of every n-gram with 1 <= n <= ``max_n``, by start then length."""
    for start in range(len(tokens)):
        for end in range(start + 1, min(start + max_n, len(tokens)) + 1):
            yield start, end


def contains_span(tokens: Sequence[str], span: Sequence[str]) -> bool:
    """Whether ``span`` occurs contiguously in ``tokens``."""
    n = len(span)
    if n == 0:
        return True
    return any(list(tokens[i:i + n]) == list(span) for i in range(len(tokens) - n + 1))
