"""String-mode judging of many (question, passage) pairs, question by question.

For each question, its ranked passages are joined (``\\x00`` between them), encoded as UTF-8
and ASCII-lower-cased at once, and each answer's longest ASCII run
(:func:`~tasks.evaluation.has_answer.answer_screen`) is searched in that buffer with
``bytes.find``, once per passage at most; only the passages holding every run of one answer
are tokenised (once per run: their padded token strings are kept by passage id) and matched
exactly. A run never holds ``\\x00`` (tokens hold no control character), so a hit never spans
two passages. A question whose passages hold a screen-breaking code point
(:data:`SCREEN_BREAKERS`) has all its passages tokenised.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

from tasks.evaluation.has_answer import TITLE_TEXT_SEPARATORS, joined_tokens, nfd

#: Passages holding one of these are tokenised without the screen (key: DPR mode, with NFD).
#: The only code points whose lower case holds ASCII (dotted capital I, Kelvin sign), the one
#: ``str.lower`` maps depending on context (capital sigma) and, under NFD, the only ones that
#: decompose into a token that ends in an ASCII character, which the raw bytes do not hold:
#: Greek question mark, Greek varia, Kelvin sign, and the negated relations (not equal, not
#: less-than, not greater-than: a symbol and U+0338, which the tokeniser splits into two
#: tokens, unlike a letter and its accent). ``tests/evaluation`` checks these lists over all
#: of Unicode.
SCREEN_BREAKERS = {False: ("\u0130", "\u212a", "\u03a3"),
                   True: ("\u0130", "\u212a", "\u03a3", "\u037e", "\u1fef",
                          "\u2260", "\u226e", "\u226f")}


def lookup(passages: Mapping, pid: Hashable) -> tuple[str | None, str | None]:
    """``passages[pid]``, a missing id reported as such."""
    try:
        return passages[pid]
    except KeyError:
        raise KeyError(f"passage id {pid!r} is ranked for a question but not in passages") \
            from None


def string_flags(prepared: Sequence, rows: Sequence[Sequence[Hashable]],
                 spans: Sequence[tuple[int, int]], passages: Mapping, mode: str
                 ) -> list[bytearray]:
    """Flags of ``rows[q][start:stop]`` for each question ``q`` in a string mode."""
    separator = TITLE_TEXT_SEPARATORS.get(mode)
    normalise = mode.startswith("dpr-")
    breakers = SCREEN_BREAKERS[normalise]
    padded_by_id: dict[Hashable, str] = {}
    out: list[bytearray] = []
    for (screens, joined), row, (start, stop) in zip(prepared, rows, spans, strict=True):
        ids = row[start:stop]
        flags = bytearray(len(ids))
        out.append(flags)
        texts: list[str | None] = []
        for pid in ids:
            try:
                title, text = passages[pid]
            except KeyError:
                lookup(passages, pid)  # raises with the id named
            if text is not None and separator is not None:
                text = (title or "") + separator + text
            texts.append(text)
        if not joined:
            continue  # no answers
        if screens is None:  # an answer without tokens: every passage with text matches
            for i, text in enumerate(texts):
                flags[i] = text is not None
            continue
        candidates = _candidates(screens, texts, breakers, normalise)
        for i in candidates:
            pid = ids[i]
            padded = padded_by_id.get(pid)
            if padded is None:
                text = texts[i]
                padded = padded_by_id[pid] = joined_tokens(nfd(text) if normalise else text)
            for answer in joined:
                if answer in padded:
                    flags[i] = 1
                    break
    return out


def _candidates(screens: tuple, texts: Sequence[str | None], breakers: tuple[str, ...],
                normalise: bool) -> list[int]:
    """Indices of the passages that may hold an answer (a superset of those that do)."""
    present = ["" if text is None else text for text in texts]
    big = "\x00".join(present)
    if big.count("\x00") != len(present) - 1 or (
            not big.isascii() and any(char in big for char in breakers)):
        return [i for i, text in enumerate(texts) if text is not None]
    folded = big.encode().lower()
    found: set[int] = set()
    for runs, others in screens:
        if not runs:  # no ASCII in this answer: its other tokens in the lower-cased text
            for i, text in enumerate(texts):
                if text is not None and i not in found:
                    lowered = (nfd(text) if normalise else text).lower()
                    if all(token in lowered for token in others):
                        found.add(i)
            continue
        longest, rest = runs[0], runs[1:]
        pos = folded.find(longest)
        i = counted = 0  # passage index of byte offset ``counted``
        while pos >= 0:
            # The passage around pos: between the separators before and after it.
            start = folded.rfind(b"\x00", 0, pos) + 1
            end = folded.find(b"\x00", pos)
            end = len(folded) if end < 0 else end
            i += folded.count(b"\x00", counted, start)
            counted = start
            if i not in found and all(folded.find(run, start, end) >= 0 for run in rest):
                found.add(i)
            pos = folded.find(longest, end) if end < len(folded) else -1
    return sorted(i for i in found if texts[i] is not None)
