"""The demo world's question grammar: every fluent phrasing of each question the world asks.

A *key* is a relation (``P19``) or a question type about a value (``birth``, ``pop``, ...). Its
*language* is the set of phrasings that ask it: the reader bank the SQuAD-style questions are
drawn from (``data/questions.json``), the EntityQuestions template(s) of the relation, and the
expansions of ``data/question_grammar.json`` (alternations ``(a|b|)`` and synonym sets
``<name>``). The paraphrase pairs of the world are drawn from these languages
(:mod:`tasks.demo.question_pairs`), and the world raters judge a paraphrase by them
(:mod:`tasks.demo.question_parser`, :mod:`tasks.demo.raters`; those import the paraphrase
pipeline's tokeniser, which the world's generation does not need).

A question may also *elaborate* its subject with a relative clause that the SQuAD contexts'
distractor sentences make true of it ("Where was Lopez, who spent a long holiday, born?"):
:func:`clauses` holds them by subject class (``data/squad_prose.json``) and :func:`elaborate`
puts one after the subject. It adds a description, not a question: the raters read such a
question as the one without the clause.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from tasks.demo.lexicon import load_data
from tasks.relation_templates import load_templates

_INNERMOST = re.compile(r"\(([^()]*)\)")
_SYNONYM = re.compile(r"<(\w+)>")
_TOKEN = re.compile(r"'s\b|\w+(?:[-.]\w+)*|[^\w\s]")


def expand(pattern: str, synonyms: dict[str, list[str]]) -> list[str]:
    """Every phrasing of a grammar pattern, in order (spaces collapsed).

    ``(a|b|)`` is an alternation (an empty alternative drops the slot; alternations nest),
    ``<name>`` a synonym set; ``{X}`` stays. An unknown synonym set is an error naming it.
    """
    def synonym(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in synonyms:
            raise ValueError(f"question grammar: pattern {pattern!r} names the unknown "
                             f"synonym set <{name}> (known: {sorted(synonyms)})")
        return "(" + "|".join(synonyms[name]) + ")"

    todo = [_SYNONYM.sub(synonym, pattern)]
    out: list[str] = []
    while todo:
        text = todo.pop(0)
        match = _INNERMOST.search(text)
        if match is None:
            text = " ".join(text.split())
            out.append(re.sub(r" (?=[?.,])", "", text))
            continue
        todo[:0] = [text[:match.start()] + alternative + text[match.end():]
                    for alternative in match.group(1).split("|")]
    return list(dict.fromkeys(out))


@cache
def phrasings() -> dict[str, tuple[str, ...]]:
    """Key -> its phrasings (``{X}`` = subject): reader bank, EQ templates, grammar."""
    result: dict[str, list[str]] = {}
    for key, items in load_data("questions")["reader"].items():
        result.setdefault(key, []).extend(items)
    for key, template in load_templates().items():
        result.setdefault(key.split("_")[0], []).append(template.replace("[X]", "{X}"))
    data = load_data("question_grammar")
    for key, patterns in data["grammar"].items():
        for pattern in patterns:
            result.setdefault(key, []).extend(
                _capitalise(p) for p in expand(pattern, data["synonyms"]))
    return {key: _distinct(items) for key, items in result.items()}


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]


def question_tokens(text: str) -> list[str]:
    """Lower-cased word and punctuation tokens, the possessive split off (``davis 's``)."""
    return _TOKEN.findall(text.lower())


def _distinct(items: Iterable[str]) -> tuple[str, ...]:
    """Phrasings that differ as tokens (the first spelling of each is kept)."""
    seen: dict[tuple[str, ...], str] = {}
    for item in items:
        seen.setdefault(tuple(question_tokens(item)), item)
    return tuple(seen.values())


@cache
def clauses() -> dict[str, tuple[str, ...]]:
    """Subject class -> the relative clauses (``who ...``, ``which ...``) that the SQuAD
    contexts' distractor sentences can make true of a subject of that class."""
    out: dict[str, list[str]] = {}
    for cls, kinds in load_data("squad_prose")["distractor"].items():
        for items in kinds.values():
            out.setdefault(cls, []).extend(item[2] for item in items if len(item) > 2)
    return {cls: tuple(dict.fromkeys(items)) for cls, items in out.items() if items}


@cache
def subject_classes() -> dict[str, tuple[str, ...]]:
    """Key -> the classes of the world's subjects it asks about (``data/question_grammar.json``)."""
    return {key: tuple(items)
            for key, items in load_data("question_grammar")["subject_classes"].items()}


#: Key prefix of the distractor questions (:func:`distractor_phrasings`).
DISTRACTOR_PREFIX = "distractor/"


@cache
def distractor_questions() -> dict[str, tuple[str, str]]:
    """Key -> ``(phrasing, subject class)`` of each question the SQuAD-style training paragraphs
    ask about a distractor sentence (``data/squad_prose.json``, in the sentence's words: the
    phrasing the world asks); keys ``distractor/<subject class>/<answer type>/<n>``."""
    out: dict[str, tuple[str, str]] = {}
    for cls, kinds in load_data("squad_prose")["distractor"].items():
        for answer_type, items in kinds.items():
            for n, item in enumerate(items):
                out[f"{DISTRACTOR_PREFIX}{cls}/{answer_type}/{n}"] = (item[1], cls)
    return out


@cache
def distractor_rephrasings() -> dict[str, tuple[str, ...]]:
    """Distractor question (as ``data/squad_prose.json`` writes it) -> its other fluent
    phrasings (``data/question_grammar.json`` ``distractor``, patterns as in ``grammar``).

    A question there that no distractor sentence asks is an error naming it (a typo would
    otherwise leave the question with its one phrasing, silently)."""
    data = load_data("question_grammar")
    patterns_of = data.get("distractor", {})
    asked = {phrasing for phrasing, _ in distractor_questions().values()}
    unknown = sorted(set(patterns_of) - asked)
    if unknown:
        raise ValueError(f"question grammar: 'distractor' names {len(unknown)} question(s) that "
                         f"no distractor sentence of data/squad_prose.json asks: {unknown[:5]}")
    return {question: tuple(_capitalise(p) for pattern in patterns
                            for p in expand(pattern, data["synonyms"]))
            for question, patterns in patterns_of.items()}


def distractor_phrasings() -> dict[str, tuple[str, ...]]:
    """Key -> the phrasings of each distractor question (:func:`distractor_questions`): the one
    the world asks first, then its rephrasings (:func:`distractor_rephrasings`)."""
    more = distractor_rephrasings()
    return {key: _distinct((phrasing, *more.get(phrasing, ())))
            for key, (phrasing, _) in distractor_questions().items()}


def all_phrasings() -> dict[str, tuple[str, ...]]:
    """Key -> phrasings of every question the world asks: the relation and value keys'
    (:func:`phrasings`) and the distractor questions' (:func:`distractor_phrasings`)."""
    return {**phrasings(), **distractor_phrasings()}


def distractor_clauses() -> dict[str, tuple[str, ...]]:
    """Distractor question key -> the relative clauses of its subject's class."""
    by_class = clauses()
    return {key: by_class.get(cls, ()) for key, (_, cls) in distractor_questions().items()}


def key_clauses() -> dict[str, tuple[str, ...]]:
    """Key -> the relative clauses that can elaborate its subject (those of its classes)."""
    by_class = clauses()
    return {key: tuple(c for cls in classes for c in by_class.get(cls, ()))
            for key, classes in subject_classes().items()}


def elaborate(phrasing: str, clause: str) -> str | None:
    """``phrasing`` with ``clause`` set off by commas right after the subject ``{X}``
    ("Where was {X}, who spent a long holiday, born?"); ``None`` where the subject is
    possessive (``{X}'s``), absent, or not followed by a word or the question mark."""
    at = phrasing.find("{X}")
    if at < 0:
        return None
    rest = phrasing[at + 3:]
    if rest.startswith("?"):
        return f"{phrasing[:at]}{{X}}, {clause}{rest}"
    if rest.startswith(" ") and rest[1:2].isalpha():
        return f"{phrasing[:at]}{{X}}, {clause},{rest}"
    return None


def synonym_pairs() -> dict[str, set[str]]:
    """Word -> its one-word alternatives in the grammar's synonym sets and alternations."""
    data = load_data("question_grammar")
    groups = [list(v) for v in data["synonyms"].values()]
    for patterns in data["grammar"].values():
        for pattern in patterns:
            groups += [m.group(1).split("|") for m in _INNERMOST.finditer(pattern)]
    out: dict[str, set[str]] = {}
    for group in groups:
        words = [w for w in group if w and " " not in w and "<" not in w]
        for word in words:
            out.setdefault(word, set()).update(w for w in words if w != word)
    return out
