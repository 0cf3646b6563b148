"""Question paraphrase pairs of the demo world, in the Quora and WikiAnswers formats.

Every pair asks one question about one subject of the world: two different phrasings of the
same key (relation or value question type) from the world's question grammar
(:mod:`tasks.demo.question_grammar`), the subject's name written the same way in both. Quora
pairs also hold non-duplicates (another question about the same subject, or the same phrasing
about another subject, its confusable neighbour when it has one), as in Quora's release; every
WikiAnswers pair is a paraphrase, lower-cased and tokenised, with a word alignment (identical
tokens, then the grammar's synonyms and the PPDB lexical rules).

A share of the paraphrase pairs (:data:`ELABORATED_SHARE`) elaborates the subject in the second
question with a relative clause of its class (:func:`tasks.demo.question_grammar.elaborate`:
"Where was Lopez born?" / "In which city was Lopez, who spent a long holiday, born?"), as
real paraphrase pairs add descriptions of what they ask about. That is what a suggestion-guided
paraphraser learns to insert a context phrase from (Gan & Ng's adversarial paraphrases).
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from tasks.demo.question_grammar import (
    clauses,
    elaborate,
    phrasings,
    question_tokens,
    synonym_pairs,
)
from tasks.demo.rng import WeightedChooser
from tasks.demo.world import World
from tasks.io.ppdb import PPDBRule
from tasks.io.quora import QuoraPair
from tasks.io.wikianswers import WikiAnswersPair

DUPLICATE_SHARE = 0.37
#: Share of the paraphrase pairs whose second question elaborates the subject with a clause.
ELABORATED_SHARE = 0.25
#: Value question types: key -> (entity class, the attribute that holds the value).
VALUE_KEYS = {"birth": ("person", "birth"), "death": ("person", "death"),
              "dyear": ("person", "death_year"), "inception": ("organisation", "inception"),
              "year": ("work", "year"), "pop": ("place", "population")}
Question = tuple[str, str]  # (key, subject entity id)


def askable(world: World) -> list[Question]:
    """Every ``(key, subject)`` the world can ask with two phrasings or more, in world order:
    the subjects' facts, then their values."""
    keys = phrasings()
    found: dict[Question, None] = {}
    for fact in world.facts:
        if world.entities[fact.subject].is_subject and len(keys.get(fact.relation, ())) > 1:
            found[(fact.relation, fact.subject)] = None
    for entity in world.subjects():
        for key, (cls, attribute) in VALUE_KEYS.items():
            if entity.cls == cls and attribute in entity.attrs and len(keys.get(key, ())) > 1:
                found[(key, entity.id)] = None
    return list(found)


def render(phrasing: str, label: str) -> str:
    """A phrasing with the subject's name in place of ``{X}``."""
    return phrasing.replace("{X}", label)


def second_phrasing(world: World, subject: str, phrasing: str, rng: random.Random) -> str:
    """The second question of a paraphrase pair: ``phrasing`` about ``subject``, elaborated
    with one of its class's clauses in :data:`ELABORATED_SHARE` of the draws (where the
    phrasing and the class allow one)."""
    options = clauses().get(world.entities[subject].cls, ())
    if options and rng.random() < ELABORATED_SHARE:
        elaborated = elaborate(phrasing, rng.choice(options))
        if elaborated is not None:
            phrasing = elaborated
    return render(phrasing, world.label(subject))


def build_quora(world: World, n: int, rng: random.Random) -> list[QuoraPair]:
    """``n`` Quora-style pairs; about 37 % are paraphrases (``is_duplicate``, the second
    question elaborated as :func:`second_phrasing` draws), popular subjects asked about more
    often (weight: hyperlink count ** 0.5)."""
    questions = askable(world)
    if not questions:
        return []
    keys = phrasings()
    by_key: dict[str, list[str]] = {}
    by_subject: dict[str, list[str]] = {}
    for key, subject in questions:
        by_key.setdefault(key, []).append(subject)
        by_subject.setdefault(subject, []).append(key)
    chooser = WeightedChooser(questions,
                              [max(1, world.entities[s].count) ** 0.5 for _, s in questions])
    qids: dict[str, int] = {}
    seen: set[tuple[str, str]] = set()
    pairs: list[QuoraPair] = []

    def qid(question: str) -> int:
        return qids.setdefault(question, len(qids) + 1)

    attempts = 0
    while len(pairs) < n and attempts < n * 20:
        attempts += 1
        key, subject = chooser.choose(rng)
        label = world.label(subject)
        first, second = rng.sample(keys[key], 2)
        q1 = render(first, label)
        duplicate = rng.random() < DUPLICATE_SHARE
        if duplicate:
            q2 = second_phrasing(world, subject, second, rng)
        elif rng.random() < 0.5:
            others = [k for k in by_subject[subject] if k != key]
            if not others:
                continue
            q2 = render(rng.choice(keys[rng.choice(others)]), label)
        else:
            pool = [s for s in by_key[key] if s != subject]
            if not pool:
                continue
            confusable = world.confusable.get(subject)
            other = confusable if confusable in pool else rng.choice(pool)
            q2 = render(first if rng.random() < 0.5 else second, world.label(other))
        if q1 == q2 or (q1, q2) in seen or (q2, q1) in seen:
            continue
        seen.add((q1, q2))
        pairs.append(QuoraPair(len(pairs), qid(q1), qid(q2), q1, q2, duplicate))
    return pairs


def _tokens(question: str) -> list[str]:
    """Lower-cased tokens, the possessive split off (``davis 's``)."""
    return question_tokens(question)


def align(tokens1: list[str], tokens2: list[str],
          synonyms: dict[str, set[str]]) -> tuple[tuple[int, int], ...]:
    """Monotone-preferring word alignment: identical tokens, then lexical paraphrases."""
    used: set[int] = set()
    links = []
    for i, token in enumerate(tokens1):
        expected = i * len(tokens2) / max(1, len(tokens1))
        matches = [j for j, other in enumerate(tokens2) if other == token and j not in used]
        if not matches:
            matches = [j for j, other in enumerate(tokens2)
                       if j not in used and other in synonyms.get(token, ())]
        if matches:
            j = min(matches, key=lambda k: (abs(k - expected), k))
            used.add(j)
            links.append((i, j))
    return tuple(links)


def alignment_synonyms(rules: Iterable[PPDBRule]) -> dict[str, set[str]]:
    """The grammar's one-word synonyms and the good lexical PPDB rules (score >= 2.5)."""
    synonyms = {word: set(others) for word, others in synonym_pairs().items()}
    for rule in rules:
        if rule.features.get("Lexical") == "1" and rule.score >= 2.5:
            synonyms.setdefault(rule.phrase, set()).add(rule.paraphrase)
    return synonyms


def build_wikianswers(world: World, n: int, rng: random.Random,
                      rules: Iterable[PPDBRule]) -> list[WikiAnswersPair]:
    """``n`` WikiAnswers-style paraphrase pairs (lower-cased, tokenised) with alignments (the
    second question elaborated as :func:`second_phrasing` draws)."""
    questions = askable(world)
    if not questions:
        return []
    keys = phrasings()
    synonyms = alignment_synonyms(rules)
    seen: set[tuple[str, str]] = set()
    pairs: list[WikiAnswersPair] = []
    attempts = 0
    while len(pairs) < n and attempts < n * 20:
        attempts += 1
        key, subject = rng.choice(questions)
        label = world.label(subject)
        first, second = rng.sample(keys[key], 2)
        t1 = _tokens(render(first, label))
        t2 = _tokens(second_phrasing(world, subject, second, rng))
        q1, q2 = " ".join(t1), " ".join(t2)
        if q1 == q2 or (q1, q2) in seen:
            continue
        seen.add((q1, q2))
        pairs.append(WikiAnswersPair(q1, q2, align(t1, t2, synonyms)))
    return pairs
