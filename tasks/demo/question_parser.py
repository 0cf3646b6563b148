"""The world's question grammar as a reader: what a question asks, how fluent it is.

:class:`QuestionGrammar` holds the language of every key (:func:`tasks.demo.question_grammar.
phrasings`) as token templates: lower-cased PTB tokens (:func:`tasks.paraphrase.text.tokenize`,
the form the paraphraser writes) with the subject replaced by :data:`SUBJECT`. It reads a
question back as ``(key, subject)`` and knows each key's vocabulary, its cue words and the
bigrams the grammar uses: what the world raters (:mod:`tasks.demo.raters`) judge by. It also
knows the relative clauses a question may elaborate its subject with
(:func:`tasks.demo.question_grammar.key_clauses`) and takes one off (:meth:`QuestionGrammar.
without_clause`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from tasks.demo.lexicon import load_data
from tasks.demo.question_grammar import (
    all_phrasings,
    distractor_clauses,
    key_clauses,
    phrasings,
)
from tasks.paraphrase.text import is_word, load_stopwords, tokenize

#: The subject's place in a tokenised phrasing.
SUBJECT = "<subject>"
_SENTINEL = "qqsubjectqq"
#: A content word used by at most this many keys' languages signals the key (a cue word).
CUE_MAX_KEYS = 3


def template_tokens(phrasing: str) -> tuple[str, ...]:
    """The tokens of a phrasing with ``{X}`` (or ``[X]``) as :data:`SUBJECT`."""
    text = phrasing.replace("{X}", f" {_SENTINEL} ").replace("[X]", f" {_SENTINEL} ")
    return tuple(SUBJECT if t == _SENTINEL else t for t in tokenize(text))


@dataclass(frozen=True)
class Parse:
    """A question read by the grammar: its key and the subject's tokens."""

    key: str
    subject: tuple[str, ...]


def _match(template: Sequence[str], tokens: Sequence[str]) -> tuple[str, ...] | None:
    """The subject tokens when ``tokens`` is ``template`` with a non-empty subject."""
    if SUBJECT not in template:
        return None
    i = list(template).index(SUBJECT)
    prefix, suffix = tuple(template[:i]), tuple(template[i + 1:])
    if len(tokens) <= len(prefix) + len(suffix):
        return None
    if tuple(tokens[:len(prefix)]) != prefix:
        return None
    if suffix and tuple(tokens[len(tokens) - len(suffix):]) != suffix:
        return None
    return tuple(tokens[len(prefix):len(tokens) - len(suffix)])


class QuestionGrammar:
    """The languages of every key as token templates, with their vocabularies and bigrams."""

    def __init__(self, languages: dict[str, tuple[str, ...]] | None = None,
                 reader: dict[str, list[str]] | None = None,
                 relative_clauses: dict[str, Sequence[str]] | None = None):
        languages = phrasings() if languages is None else languages
        relative_clauses = key_clauses() if relative_clauses is None else relative_clauses
        self.clauses = {k: frozenset(tuple(tokenize(c)) for c in items)
                        for k, items in relative_clauses.items()}
        reader = load_data("questions")["reader"] if reader is None else reader
        self.languages = {k: frozenset(template_tokens(p) for p in items)
                          for k, items in languages.items()}
        self.reader = {k: tuple(template_tokens(p) for p in items) for k, items in reader.items()}
        stopwords = load_stopwords()
        self.vocabulary = {k: frozenset(t for tpl in templates for t in tpl
                                        if t != SUBJECT and is_word(t) and t not in stopwords)
                           for k, templates in self.languages.items()}
        users: dict[str, int] = {}
        for words in self.vocabulary.values():
            for word in words:
                users[word] = users.get(word, 0) + 1
        self.cues = {k: frozenset(w for w in words if users[w] <= CUE_MAX_KEYS)
                     for k, words in self.vocabulary.items()}
        self.bigrams = frozenset(pair for templates in self.languages.values()
                                 for tpl in templates
                                 for pair in itertools.pairwise(("<s>", *tpl, "</s>")))
        self.all_templates = frozenset(t for ts in self.languages.values() for t in ts)

    def parse(self, question: str, reader_only: bool = False) -> list[Parse]:
        """Every ``(key, subject)`` reading of ``question`` (reader bank first: the SQuAD-style
        questions are drawn from it; the whole grammar when the reader bank has none)."""
        found = self._parse(tokenize(question), self.reader)
        if found or reader_only:
            return found
        return self.readings(question)

    def readings(self, question: str) -> list[Parse]:
        """Every ``(key, subject)`` reading of ``question`` by the whole grammar."""
        return self._parse(tokenize(question),
                           {k: tuple(v) for k, v in self.languages.items()})

    @staticmethod
    def _parse(tokens: Sequence[str], table: dict[str, Sequence[tuple[str, ...]]]
               ) -> list[Parse]:
        found: dict[Parse, None] = {}
        for key, templates in table.items():
            for template in templates:
                subject = _match(template, tokens)
                if subject is not None:
                    found[Parse(key, subject)] = None
        return list(found)

    def keys_of(self, template: tuple[str, ...]) -> list[str]:
        """The keys whose language holds ``template``."""
        return [k for k, language in self.languages.items() if template in language]

    def without_clause(self, key: str, template: tuple[str, ...]
                       ) -> tuple[tuple[str, ...], bool]:
        """``template`` without a relative clause that can elaborate a subject of ``key`` (of
        the subject's class), set off by commas right after the subject (``<subject> , who
        spent a long holiday ,`` or, before the final ``?``, ``<subject> , who spent a long
        holiday``), and whether it had one."""
        for i, token in enumerate(template[:-2]):
            if token != SUBJECT or template[i + 1] != ",":
                continue
            for clause in self.clauses.get(key, ()):
                end = i + 2 + len(clause)
                if template[i + 2:end] != clause or end >= len(template):
                    continue
                if template[end] == ",":
                    return template[:i + 1] + template[end + 1:], True
                if template[end:] == ("?",):
                    return template[:i + 1] + template[end:], True
        return template, False

    def attested_share(self, template: tuple[str, ...]) -> float:
        """Share of the template's bigrams (with sentence start and end) the grammar uses."""
        pairs = list(itertools.pairwise(("<s>", *template, "</s>")))
        return sum(p in self.bigrams for p in pairs) / len(pairs)


def training_grammar() -> QuestionGrammar:
    """The grammar of every question the SQuAD-style training set asks: the world's grammar
    and the questions about the contexts' distractor sentences
    (:func:`tasks.demo.question_grammar.distractor_phrasings`: the phrasing the world asks and
    its rephrasings, elaborated by the clauses of their subject's class). What the world
    raters read the reader augmentation's training questions with; the test sets' questions
    are the reader bank's."""
    return QuestionGrammar(languages=all_phrasings(),
                           relative_clauses={**key_clauses(), **distractor_clauses()})


def with_subject(tokens: Sequence[str], subject: Sequence[str]) -> tuple[tuple[str, ...], int]:
    """``tokens`` with every occurrence of ``subject`` replaced by :data:`SUBJECT`, and how
    many occurrences there were."""
    out: list[str] = []
    count, i, n = 0, 0, len(subject)
    while i < len(tokens):
        if n and tuple(tokens[i:i + n]) == tuple(subject):
            out.append(SUBJECT)
            count += 1
            i += n
        else:
            out.append(tokens[i])
            i += 1
    return tuple(out), count
