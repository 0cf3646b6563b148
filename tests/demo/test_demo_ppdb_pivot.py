"""The demo world's PPDB rules by pivoting over question keys (tasks/demo/paraphrase_resources.py):
phrases that ask the same key become paraphrases; phrases of one phrasing, phrases sharing a
word and the subject never do; one rule per (phrase, paraphrase) in the written file."""

from __future__ import annotations

from collections import Counter

from tasks.demo.paraphrase_resources import (
    MAX_RULES_PER_WORD,
    alignment_rules,
    build_ppdb,
    phrasal_rules,
    pivot_rules,
)
from tasks.demo.question_pairs import alignment_synonyms

LANGUAGES = {
    "P19": ("Where was {X} born?", "What is the birthplace of {X}?",
            "What is {X}'s hometown?"),
    "P20": ("Where did {X} die?", "Where did {X} pass away?"),
    "birth": ("When was {X} born?", "What is the birth date of {X}?"),
}


def _rules(languages=LANGUAGES) -> dict[tuple[str, str], object]:
    return {(r.phrase, r.paraphrase): r for r in pivot_rules(languages)}


def test_phrases_of_one_key_are_paraphrases_in_both_directions():
    rules = _rules()
    for pair in [("born", "birthplace"), ("birthplace", "born"), ("born", "hometown"),
                 ("die", "pass away"), ("pass away", "die")]:
        assert pair in rules, pair
        assert rules[pair].entailment == "Equivalence"
    assert rules[("die", "pass away")].features["Lexical"] == "0"
    assert rules[("born", "hometown")].features["Lexical"] == "1"


def test_the_pivot_probability_sums_over_the_keys_a_phrase_asks():
    rules = _rules()
    # "born" asks P19 in 1 of its 2 phrasings and birth in the other: p(k|born) = 1/2 each;
    # "birthplace" is in 1 of P19's 3 phrasings, "birth date" in 1 of birth's 2
    p_birthplace = float(rules[("born", "birthplace")].features["p(e|f)"])
    p_birth_date = float(rules[("born", "birth date")].features["p(e|f)"])
    assert p_birth_date < p_birthplace  # -log p: 1/4 beats 1/6
    assert rules[("born", "birth date")].score > rules[("born", "birthplace")].score


def test_no_rule_between_keys_within_a_phrasing_sharing_a_word_or_with_the_subject():
    rules = _rules()
    assert ("born", "die") not in rules and ("die", "born") not in rules  # no common key
    assert ("pass", "away") not in rules  # one phrasing holds both
    assert ("birth date", "birth") not in rules and ("birth", "birth date") not in rules
    assert not any("{x}" in p or "{x}" in q or "x" in (p, q) for p, q in rules)
    assert all(r.paraphrase != r.phrase for r in rules.values())


def test_each_phrase_keeps_its_best_rules_only():
    many = {"P1": tuple(f"What is the {w} of {{X}}?" for w in
                        [f"word{chr(97 + i)}{chr(97 + j)}" for i in range(5) for j in range(4)])}
    rules = pivot_rules(many)
    per_phrase = Counter(r.phrase for r in rules)
    assert max(per_phrase.values()) == MAX_RULES_PER_WORD
    assert all(1.0 <= r.score <= 5.5 for r in rules)


def test_the_world_file_holds_each_pair_once_and_alignments_ignore_pivot_rules():
    rules = build_ppdb()
    pairs = Counter((r.phrase, r.paraphrase) for r in rules)
    assert max(pairs.values()) == 1
    pivot = {(r.phrase, r.paraphrase) for r in pivot_rules()}
    curated = {(r.phrase, r.paraphrase) for r in phrasal_rules()}
    scores = {(r.phrase, r.paraphrase): r.score for r in rules}
    lowest_pivot = min(scores[p] for p in pivot - curated)
    assert all(score < lowest_pivot for p, score in scores.items()
               if p not in pivot and p not in curated)  # pivot evidence ranks first
    assert scores[("born", "hometown")] > scores[("born", "congenital")]
    assert ("born", "birthplace") in pairs and ("die", "pass away") in pairs
    assert ("married", "spouse") in pairs
    aligned = alignment_synonyms(alignment_rules())
    assert "birthplace" not in aligned.get("born", set())
    assert {(r.phrase, r.paraphrase) for r in alignment_rules()} <= set(pairs)
