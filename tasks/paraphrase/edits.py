"""What the paraphrases of a test set change: the words a reader could miss.

Gan & Ng (2019) explain the readers' drop by the words a paraphrase changes: readers lean on the
words a question shares with the sentence that holds the answer. For each (original,
paraphrase) pair of a paraphrased set this measures, on lower-cased tokens without stop words
or punctuation (:func:`tasks.paraphrase.text.tokenize`, the pipeline's stop list):

* ``changed``: content words in one question and not in the other (symmetric difference);
* ``removes_answer_sentence_word``: the paraphrase drops a content word of the original that
  the answer's sentence holds (the sentence, split by segtok, holding the first gold answer's
  ``answer_start``);
* ``overlap``: the share of a question's content words found in the answer's sentence, for
  the original and the paraphrase;
* ``holds_suggestion``: the paraphrase contains its suggestion (case-insensitive); for the
  adversarial set that is the context phrase meant to lead the reader astray;
* ``adds_context_word``: the paraphrase adds a content word (one the original lacks) that
  another sentence of the context holds and the answer's sentence does not: a cue pointing the
  reader away from the answer (Gan & Ng's adversarial paraphrases use "context words near an
  incorrect answer candidate"). Works without suggestions, so on the released sets too.

:func:`summarise_edits` reads a set in the layout of :mod:`tasks.paraphrase.test_sets` (its
``<name>_pairs.parquet`` and ``<name>_orig.json``) and returns counts and means for the report;
:func:`summarise_release` reads a pair of released files (Gan & Ng's ``<name>_orig.json`` and
``<name>_para.json``, no pairs table, no suggestions), to set the flow's sets beside them;
:func:`aligned_edits` gives its per-pair edits and :func:`edit_group` sorts a pair into one of
four groups (the readers flow scores orig vs para per group).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks.io.errors import DataFormatError
from tasks.io.squad import SquadDataset, SquadQuestion, read_squad
from tasks.io.tables import read_table
from tasks.paraphrase.adversarial import split_sentences
from tasks.paraphrase.text import is_content, load_stopwords, tokenize


@dataclass(frozen=True, slots=True)
class PairEdit:
    """What one paraphrase changes (see the module docstring)."""

    changed: int
    removes_answer_sentence_word: bool
    overlap_original: float
    overlap_paraphrase: float
    holds_suggestion: bool | None  # None: the pair had no suggestion
    adds_context_word: bool = False


def answer_sentence(context: str, answer_start: int) -> str:
    """The sentence of ``context`` (segtok) that holds character ``answer_start``; the whole
    context when no sentence does (the answer starts in white space between two)."""
    for start, end in split_sentences(context):
        if start <= answer_start < end:
            return context[start:end]
    return context


def gold_sentence(question: SquadQuestion) -> str:
    """The sentence of the question's context that holds its first gold answer."""
    return answer_sentence(question.context, question.answers[0].answer_start)


def content_words(text: str, stopwords: frozenset[str]) -> frozenset[str]:
    """The lower-cased content tokens of ``text``."""
    return frozenset(t for t in tokenize(text) if is_content(t, stopwords))


def _overlap(question: frozenset[str], sentence: frozenset[str]) -> float:
    return len(question & sentence) / len(question) if question else 0.0


def pair_edit(original: str, paraphrase: str, suggestion: str | None, sentence: str,
              stopwords: frozenset[str], context: str = "") -> PairEdit:
    """What ``paraphrase`` changes in ``original``, against the answer's ``sentence`` and the
    rest of its ``context`` (empty: no context word can be added)."""
    before, after = content_words(original, stopwords), content_words(paraphrase, stopwords)
    cues = content_words(sentence, stopwords)
    elsewhere = content_words(context, stopwords) - cues
    holds = None if not suggestion else suggestion.lower() in paraphrase.lower()
    return PairEdit(len(before ^ after), bool((before - after) & cues),
                    _overlap(before, cues), _overlap(after, cues), holds,
                    bool((after - before) & elsewhere))


def summarise(edits: Sequence[PairEdit]) -> dict[str, Any]:
    """Counts and means of a set's pair edits (means are None for an empty set)."""
    n = len(edits)

    def mean(values: list[float]) -> float | None:
        return sum(values) / n if n else None

    suggested = [e for e in edits if e.holds_suggestion is not None]
    return {
        "pairs": n,
        "changed_content_words": mean([e.changed for e in edits]),
        "no_content_word_changed": sum(e.changed == 0 for e in edits),
        "removes_answer_sentence_word": sum(e.removes_answer_sentence_word for e in edits),
        "adds_context_word": sum(e.adds_context_word for e in edits),
        "answer_sentence_overlap_original": mean([e.overlap_original for e in edits]),
        "answer_sentence_overlap_paraphrase": mean([e.overlap_paraphrase for e in edits]),
        "with_suggestion": len(suggested),
        "holds_suggestion": sum(bool(e.holds_suggestion) for e in suggested),
    }


def summarise_edits(pairs_path: Path, orig_path: Path) -> dict[str, Any]:
    """:func:`summarise` over the pairs of one paraphrased set.

    ``pairs_path`` is the set's ``<name>_pairs.parquet`` (``orig_id``, ``original``,
    ``paraphrase``, ``suggestion``), ``orig_path`` its ``<name>_orig.json`` (SQuAD v1.1: the
    context and gold answers under ``orig_id``). A pair whose ``orig_id`` the file lacks is a
    :class:`~tasks.io.errors.DataFormatError` naming it.
    """
    questions = {q.id: q for q in read_squad(orig_path).questions()}
    stopwords = load_stopwords()
    edits = []
    for number, row in enumerate(read_table(pairs_path).to_pylist()):
        question = questions.get(str(row["orig_id"]))
        if question is None or not question.answers:
            raise DataFormatError(pairs_path, f"row {number}", f"an orig_id of {orig_path} "
                                  "with a gold answer", repr(row["orig_id"]))
        edits.append(pair_edit(row["original"], row["paraphrase"], row.get("suggestion"),
                               gold_sentence(question), stopwords, question.context))
    return summarise(edits)


def summarise_release(orig_path: Path, para_path: Path) -> dict[str, Any]:
    """:func:`summarise` over a released paraphrased set (:func:`aligned_edits`)."""
    return summarise(aligned_edits(orig_path, para_path))


def aligned_edits(orig_path: Path, para_path: Path) -> list[PairEdit]:
    """The edit of every pair of a paraphrased set given as two SQuAD files that align by
    position (same titles and contexts, as in Gan & Ng's release and the flow's own sets); no
    suggestions. :func:`dataset_edits` on the files' contents."""
    return dataset_edits(read_squad(orig_path), read_squad(para_path))


def dataset_edits(orig: SquadDataset, para: SquadDataset) -> list[PairEdit]:
    """:func:`aligned_edits` of two SQuAD files already read.

    Sets of different lengths, or a position whose context differs, are a
    :class:`~tasks.io.errors.DataFormatError` naming the paraphrased file and the position.
    """
    originals = list(orig.questions())
    paraphrases = list(para.questions())
    if len(originals) != len(paraphrases):
        raise DataFormatError(para.path, "top level", f"{len(originals)} questions, aligned "
                              f"by position with {orig.path}", str(len(paraphrases)))
    stopwords = load_stopwords()
    edits = []
    for position, (original, paraphrase) in enumerate(zip(originals, paraphrases,
                                                          strict=True)):
        if original.context != paraphrase.context or not original.answers:
            raise DataFormatError(para.path, f"question {position} (id {paraphrase.id!r})",
                                  f"the context of question {position} of {orig.path} and "
                                  "a gold answer there", "another context or no answer")
        edits.append(pair_edit(original.question, paraphrase.question, None,
                               gold_sentence(original), stopwords, original.context))
    return edits


#: The groups of :func:`edit_group`, boldest first.
EDIT_GROUPS = ("removes_answer_sentence_word", "adds_context_word", "other_content_change",
               "no_content_change")


def edit_group(edit: PairEdit) -> str:
    """Which of :data:`EDIT_GROUPS` a pair belongs to: it drops a word of the answer's
    sentence; else it adds a word of another sentence of the context; else it changes content
    words; else it changes none (function words, case)."""
    if edit.removes_answer_sentence_word:
        return EDIT_GROUPS[0]
    if edit.adds_context_word:
        return EDIT_GROUPS[1]
    return EDIT_GROUPS[2] if edit.changed else EDIT_GROUPS[3]
