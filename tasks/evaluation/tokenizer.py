"""DrQA / DPR ``SimpleTokenizer`` semantics (``dpr/utils/tokenizers.py``).

The reference tokenizer compiles ``([\\p{L}\\p{N}\\p{M}]+)|([^\\p{Z}\\p{C}])`` with the ``regex``
module and the flags ``IGNORECASE + UNICODE + MULTILINE``: a token is a run of letters, digits
and combining marks, or any single other character that is neither a separator (spaces, including
the no-break space) nor a control/format/unassigned character. ``words(uncased=True)`` lower-cases
each token *separately* with ``str.lower``.

This module keeps the reference pattern and flags (only the capturing groups are dropped, which
does not change what matches) and returns plain lists of strings instead of ``Tokens`` objects.

Lower-casing per token matters for one character: ``str.lower`` is context sensitive for the
Greek capital sigma (final form ``ς`` at the end of a word), so lower-casing the whole text first
can differ from lower-casing each token (``"ΑΣ.Β"``: per token ``["ας", ".", "β"]``; whole text
``"ασ.β"``, because ``.`` is case-ignorable). Every other code point lowers context-free and into
characters of the same token class (checked over all of Unicode in the tests), so text without
``Σ`` takes the fast path of lower-casing first and tokenising once.
"""

from __future__ import annotations

import regex

ALPHA_NUM = r"[\p{L}\p{N}\p{M}]+"
NON_WS = r"[^\p{Z}\p{C}]"
FLAGS = regex.IGNORECASE + regex.UNICODE + regex.MULTILINE

#: The exact pattern of the reference implementation (with its capturing groups).
REFERENCE_PATTERN = f"({ALPHA_NUM})|({NON_WS})"

# Same alternatives without capturing groups, so that ``findall`` returns the matched text.
_TOKEN_RE = regex.compile(f"{ALPHA_NUM}|{NON_WS}", flags=FLAGS)
_findall = _TOKEN_RE.findall
_CAPITAL_SIGMA = "\u03a3"  # the only code point str.lower maps depending on context


def tokenize(text: str) -> list[str]:
    """Tokens of ``text`` as matched text (case preserved), in order."""
    return _findall(text)


def words(text: str, uncased: bool = True) -> list[str]:
    """Token texts of ``text``; lower-cased token by token when ``uncased`` (the default)."""
    if not uncased:
        return _findall(text)
    if _CAPITAL_SIGMA not in text:
        return _findall(text.lower())
    return [token.lower() for token in _findall(text)]


class SimpleTokenizer:
    """Object API mirroring the reference class: ``tokenize`` and ``words``."""

    ALPHA_NUM = ALPHA_NUM
    NON_WS = NON_WS

    def tokenize(self, text: str) -> list[str]:
        return tokenize(text)

    def words(self, text: str, uncased: bool = True) -> list[str]:
        return words(text, uncased=uncased)
