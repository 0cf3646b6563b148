"""(question, context) pairs -> overlapping windows of tokens, with answer labels.

A context longer than one window is split into several windows (``[CLS] question [SEP]
context piece [SEP]``) that share ``doc_stride`` context tokens, with a fast tokenizer's
``return_overflowing_tokens`` and ``return_offsets_mapping`` (the recipe of Hugging Face's
``run_qa.py``). Every window keeps, per token, the character offsets of that token in the
ORIGINAL context (``None`` outside the context), so a decoded span maps straight back to a
substring of the context, whatever the tokenizer's normalisation (lower-casing, accent
stripping, Unicode).

Training labels: the start and end tokens of the first gold answer in each window that holds
the whole answer; index 0 (``[CLS]``) in a window that does not. An answer that no window holds
(longer than a window's context room) is counted in :attr:`Featurized.unlabelled`. A question
longer than ``max_query_length`` tokens is cut at that token (counted in
:attr:`Featurized.truncated_questions`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from models.reader.config import WindowConfig


class Answer(Protocol):
    """A gold answer: its text and character offset (``SquadAnswer`` fits)."""

    text: str
    answer_start: int


class Example(Protocol):
    """What the reader reads (``tasks.io.squad.SquadQuestion`` fits)."""

    id: str
    question: str
    context: str
    answers: Sequence[Answer]


@dataclass(frozen=True, slots=True)
class QAExample:
    """A plain example (tests, benchmarks, callers without a SQuAD file)."""

    id: str
    question: str
    context: str
    answers: tuple[Any, ...] = ()


@dataclass(slots=True)
class Window:
    """One window of one example."""

    example_index: int
    input_ids: list[int]
    token_type_ids: list[int] | None
    offsets: list[tuple[int, int] | None]  # char span in the context; None outside it
    start_position: int = 0
    end_position: int = 0

    def __len__(self) -> int:
        return len(self.input_ids)


@dataclass
class Featurized:
    """The windows of a list of examples, and what could not be labelled as given."""

    windows: list[Window]
    n_examples: int
    truncated_questions: list[str] = field(default_factory=list)
    unlabelled: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """One line for logs: counts of windows, cut questions and unlabelled answers."""
        return (f"{self.n_examples} questions -> {len(self.windows)} windows; "
                f"{len(self.truncated_questions)} questions cut to max_query_length; "
                f"{len(self.unlabelled)} answers in no window (labelled [CLS])")


def _cut_questions(tokenizer: Any, questions: list[str], limit: int) -> tuple[list[str],
                                                                             list[int]]:
    """Questions stripped of leading white space and cut after ``limit`` tokens."""
    stripped = [q.lstrip() for q in questions]
    enc = tokenizer(stripped, add_special_tokens=False, return_offsets_mapping=True)
    cut: list[int] = []
    for i, offsets in enumerate(enc["offset_mapping"]):
        if len(offsets) > limit:
            stripped[i] = stripped[i][: offsets[limit - 1][1]]
            cut.append(i)
    return stripped, cut


def _label(window: Window, start_char: int, end_char: int) -> bool:
    """Set the window's start/end token of the answer ``[start_char, end_char)``; False (and
    ``[CLS]``) when the window does not hold the whole answer."""
    context = [i for i, o in enumerate(window.offsets) if o is not None]
    first, last = context[0], context[-1]
    if window.offsets[first][0] > start_char or window.offsets[last][1] < end_char:
        window.start_position = window.end_position = 0
        return False
    start = first
    while start <= last and window.offsets[start][0] <= start_char:
        start += 1
    end = last
    while end >= first and window.offsets[end][1] >= end_char:
        end -= 1
    window.start_position, window.end_position = start - 1, end + 1
    return True


def featurize(tokenizer: Any, examples: Sequence[Example], window: WindowConfig,
              labels: bool = True, chunk: int = 1000) -> Featurized:
    """Windows of every example (in example order); with ``labels``, answer positions.

    ``tokenizer`` must be a fast (Rust) tokenizer: offsets come from it. Examples whose context
    is empty (nothing to read) raise ``ValueError`` naming the question id.
    """
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(f"{type(tokenizer).__name__} is not a fast tokenizer; the reader needs "
                         "character offsets (return_offsets_mapping)")
    out = Featurized([], len(examples))
    use_types = "token_type_ids" in tokenizer.model_input_names
    for begin in range(0, len(examples), chunk):
        part = examples[begin : begin + chunk]
        for ex in part:
            if not ex.context.strip():
                raise ValueError(f"question {ex.id!r}: empty context, nothing to read")
        questions, cut = _cut_questions(tokenizer, [ex.question for ex in part],
                                        window.max_query_length)
        out.truncated_questions.extend(part[i].id for i in cut)
        enc = tokenizer(questions, [ex.context for ex in part], truncation="only_second",
                        max_length=window.max_length, stride=window.doc_stride,
                        return_overflowing_tokens=True, return_offsets_mapping=True,
                        padding=False)
        labelled: dict[int, bool] = {}
        for w, local in enumerate(enc["overflow_to_sample_mapping"]):
            sequence_ids = enc.sequence_ids(w)
            offsets = [tuple(o) if s == 1 else None
                       for o, s in zip(enc["offset_mapping"][w], sequence_ids, strict=True)]
            item = Window(begin + local, enc["input_ids"][w],
                          enc["token_type_ids"][w] if use_types else None, offsets)
            if not any(o is not None for o in offsets):
                continue  # a window of question only (cannot happen with valid settings)
            ex = part[local]
            if labels and ex.answers:
                answer = ex.answers[0]
                start = answer.answer_start
                hit = _label(item, start, start + len(answer.text))
                labelled[local] = labelled.get(local, False) or hit
            out.windows.append(item)
        if labels:
            out.unlabelled.extend(part[i].id for i, hit in sorted(labelled.items()) if not hit)
    return out
