"""WikiAnswers paraphrase pairs with word alignments (Fader et al., 2013): reader and writer.

As we understand the release: one pair per line, ``question_1<TAB>question_2<TAB>alignment``,
where ``alignment`` is space-separated ``i-j`` pairs of 0-based indexes into the whitespace
tokens of question 1 (``i``) and question 2 (``j``); it may be empty (the line then ends with a
tab). Files may be gzipped (detected from the magic bytes).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tasks.io.atomic import atomic_write
from tasks.io.errors import DataFormatError, SkipCounter, handle, preview
from tasks.io.ppdb import iter_lines

_ITEM = re.compile(r"(\d+)-(\d+)")
_FIELDS = "3 tab-separated fields (question_1, question_2, alignment)"


@dataclass(frozen=True, slots=True)
class WikiAnswersPair:
    """Two questions marked as paraphrases and the word alignment between their tokens."""

    question1: str
    question2: str
    alignment: tuple[tuple[int, int], ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "alignment",
                           tuple((int(i), int(j)) for i, j in self.alignment))


def parse_wikianswers_line(line: str, path: str | Path = "<string>",
                           lineno: int = 1) -> WikiAnswersPair:
    """Parse one line; raise :class:`DataFormatError` naming ``path`` and ``lineno``."""
    where = f"line {lineno}"
    fields = line.split("\t")
    if len(fields) != 3:
        raise DataFormatError(path, where, _FIELDS, f"{len(fields)} fields in {preview(line)}")
    question1, question2, alignment_text = fields
    for name, question in (("question_1", question1), ("question_2", question2)):
        if not question.strip():
            raise DataFormatError(path, where, f"a non-empty {name}", preview(question))
    n1, n2 = len(question1.split()), len(question2.split())
    alignment = []
    for item in alignment_text.split():
        match = _ITEM.fullmatch(item)
        if match is None:
            raise DataFormatError(path, where, "alignment items i-j with integer token indexes",
                                  preview(item))
        i, j = int(match[1]), int(match[2])
        if i >= n1 or j >= n2:
            raise DataFormatError(
                path, where,
                f"alignment indexes below the token counts ({n1} tokens in question 1, "
                f"{n2} in question 2)", preview(item))
        alignment.append((i, j))
    return WikiAnswersPair(question1, question2, tuple(alignment))


def iter_wikianswers_pairs(path: str | Path, on_error: str = "raise",
                           skips: SkipCounter | None = None) -> Iterator[WikiAnswersPair]:
    """Stream the question pairs of a WikiAnswers alignment file (plain or gzipped).

    Empty lines are ignored. A malformed line (not 3 tab-separated fields, an empty question,
    an alignment item that is not ``i-j``, an index past the end of its question's tokens, bad
    UTF-8) raises :class:`DataFormatError` naming the file and line, or with
    ``on_error="skip"`` is counted in ``skips``.
    """
    for lineno, line in iter_lines(path):
        if isinstance(line, DataFormatError):
            handle(line, on_error, skips)
            continue
        if not line:
            continue
        try:
            pair = parse_wikianswers_line(line, path, lineno)
        except DataFormatError as error:
            handle(error, on_error, skips)
            continue
        yield pair


def format_wikianswers_pair(pair: WikiAnswersPair) -> str:
    """The pair as one line (without the line ending)."""
    for question in (pair.question1, pair.question2):
        if any(c in question for c in "\t\r\n"):
            raise ValueError(f"WikiAnswers questions cannot hold tabs or line breaks: "
                             f"{preview(question)}")
    alignment = " ".join(f"{i}-{j}" for i, j in pair.alignment)
    return f"{pair.question1}\t{pair.question2}\t{alignment}"


def write_wikianswers_pairs(path: str | Path, pairs: Iterable[WikiAnswersPair]) -> Path:
    """Atomically write ``pairs`` one per line (UTF-8, ``\\n`` line endings)."""
    with atomic_write(path, newline="") as out:
        for pair in pairs:
            out.write(format_wikianswers_pair(pair) + "\n")
    return Path(path)
