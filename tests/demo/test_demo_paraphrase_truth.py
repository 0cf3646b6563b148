"""The demo world's question paraphrases and its world raters (issue 14, first section).

The world's Quora/WikiAnswers pairs are real paraphrases (same subject, same question), the
world raters reject the non-paraphrases a demo run once kept and accept a correct paraphrase,
and the rating form they fill goes through the same import as real raters' forms: only the pairs
both accept reach the written sets.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from tasks.demo.kb import build_world
from tasks.demo.lexicon import load_data
from tasks.demo.question_pairs import (
    ELABORATED_SHARE,
    askable,
    build_quora,
    build_wikianswers,
)
from tasks.demo.question_parser import QuestionGrammar, with_subject
from tasks.demo.raters import ELABORATED_SEMANTIC, rate, rate_candidates, rate_form
from tasks.demo.rng import stream
from tasks.io.squad import SquadAnswer, SquadQuestion, read_squad
from tasks.io.tables import read_table, write_table
from tasks.params_loading import load_params
from tasks.paraphrase.flow_tasks import acceptance, human_evaluation
from tasks.paraphrase.human_eval import export_form, import_ratings
from tasks.paraphrase.test_sets import ParaphrasePair, write_test_set
from tasks.paraphrase.text import tokenize
from tasks.paraphrase.training_data import alignment_suggestions, quora_suggestion

ROOT = Path(__file__).resolve().parents[2]
#: (original, paraphrase) pairs a demo run kept above the similarity bars: no paraphrases.
BAD = [("Where is Toby Davis originally from?", "what is toby davis thes?"),
       ("In which country is Zvirbulewick Festival?",
        "in which country is zvirbuwick festival festival f?"),
       ("Which label put out The Winter Shadows III?",
        "which label is the label put out the winter shadows iii?")]
GOOD = [("Where is Toby Davis originally from?", "what is toby davis's place of birth?"),
        ("Which label put out The Winter Shadows III?",
         "which record label is the winter shadows iii signed to?"),
        ("In which country is Zvirbulewick Festival?",
         "what nation is zvirbulewick festival located in?")]
#: Fluent by the lenient rater (every bigram is the grammar's), not a sentence of the grammar.
BORDERLINE = ("Where is Toby Davis originally from?", "where was toby davis born in?")
#: A relative clause set off by a comma (Quora spelling and WikiAnswers tokens).
ELABORATION = re.compile(r" ?, (who|which) ")


@pytest.fixture(scope="module")
def grammar() -> QuestionGrammar:
    return QuestionGrammar()


@pytest.fixture(scope="module")
def world():
    config = load_params(ROOT / "params.yaml", profile="smoke").demo_world
    return build_world(config)


def test_the_world_knows_what_each_reader_question_asks(grammar):
    """Every phrasing of the SQuAD-style question bank reads back as its own key and subject."""
    for key, items in load_data("questions")["reader"].items():
        for item in items:
            parses = grammar.parse(item.replace("{X}", "The Winter Shadows III"))
            assert [(p.key, p.subject) for p in parses] == \
                [(key, ("the", "winter", "shadows", "iii"))], (key, item, parses)


def _reading(grammar, question):
    return {(p.key, p.subject) for p in grammar.readings(question)}


def test_world_pairs_are_real_paraphrases(world, grammar):
    quora = build_quora(world, 400, stream(13, "quora"))
    wikianswers = build_wikianswers(world, 400, stream(13, "wikianswers"), rules=())
    assert len(quora) == 400 and len(wikianswers) == 400
    duplicates = [p for p in quora if p.is_duplicate]
    assert 0.25 < len(duplicates) / len(quora) < 0.5
    elaborated = rated = 0
    for first, second in [(p.question1, p.question2) for p in duplicates] + \
            [(p.question1, p.question2) for p in wikianswers]:
        assert first != second
        if ELABORATION.search(second):  # a clause describes the subject
            elaborated += 1
            plain = re.sub(r" ?, (?:who|which) [^,?]*(,|(?=\?))", "", second)
            assert plain != second and not ELABORATION.search(plain)
            if rate(grammar, first, plain, lenient=False) == (5, 5):
                rated += 1
                assert rate(grammar, first, second, lenient=False) == \
                    (ELABORATED_SEMANTIC, 5), (first, second)
            second = plain
        assert _reading(grammar, first) & _reading(grammar, second), (first, second)
    assert 0.1 < elaborated / (len(duplicates) + len(wikianswers)) < ELABORATED_SHARE
    assert rated > elaborated / 2
    for pair in quora:
        if not pair.is_duplicate:  # another question, or the same about another subject
            assert not _reading(grammar, pair.question1) & _reading(grammar, pair.question2)
    assert all(p.alignment for p in wikianswers)
    keys = {key for key, _ in askable(world)}
    assert {"P19", "birth", "pop"} <= keys


def test_raters_read_a_clause_of_the_subject_s_class_as_a_description(grammar):
    original = "Where is Toby Davis originally from?"
    for lenient in (False, True):
        assert rate(grammar, original, "where was toby davis , who moved abroad , born ?",
                    lenient) == (ELABORATED_SEMANTIC, 5)
        assert rate(grammar, original, "what is the hometown of toby davis , who gave a "
                    "lecture ?", lenient) == (ELABORATED_SEMANTIC, 5)
        # a clause of another class (companies run factories), or words that are no clause of
        # the grammar, are foreign words
        for wrong in ("where was toby davis , which runs a factory , born ?",
                      "where was toby davis , who moved , born ?",
                      "where was toby davis , who spent a long holiday born ?"):
            assert rate(grammar, original, wrong, lenient)[0] < 4, wrong


def test_an_elaborated_pair_teaches_the_clause_as_its_suggestion(world):
    """The training triples' suggestions of an elaborated pair are the clause's words: what the
    paraphraser learns to insert when a context phrase is suggested."""
    pairs = [p for p in build_wikianswers(world, 400, stream(13, "wikianswers"), rules=())
             if ELABORATION.search(p.question2)]
    assert len(pairs) > 20
    phrase_in_clause = keyphrase_in_clause = 0
    for pair in pairs:
        clause = pair.question2.split(" , ")[1].removesuffix(" ?")
        suggestions = alignment_suggestions(pair)
        phrase_in_clause += any(s in clause and len(s.split()) >= 2 for s in suggestions[:2])
        keyphrase_in_clause += quora_suggestion(pair.question1, pair.question2) in clause
    # the aligner sometimes links the clause's "a" to a "the" of the source, and TextRank
    # sometimes ranks another new phrase first ("pass away" for "die")
    assert phrase_in_clause > 0.7 * len(pairs) and keyphrase_in_clause > 0.7 * len(pairs)


@pytest.mark.parametrize("original,paraphrase", BAD)
def test_world_raters_reject_the_bad_examples(grammar, original, paraphrase):
    for lenient in (False, True):
        semantic, fluency = rate(grammar, original, paraphrase, lenient)
        assert min(semantic, fluency) < 4, (lenient, semantic, fluency)


@pytest.mark.parametrize("original,paraphrase", GOOD)
def test_world_raters_accept_a_correct_paraphrase(grammar, original, paraphrase):
    assert rate(grammar, original, paraphrase, lenient=False) == (5, 5)
    assert rate(grammar, original, paraphrase, lenient=True) == (5, 5)


def test_raters_disagree_on_fluency_only_where_documented(grammar):
    assert rate(grammar, *BORDERLINE, lenient=True) == (4, 4)
    assert rate(grammar, *BORDERLINE, lenient=False) == (4, 3)
    # another question about the same subject is a different question for both
    assert rate(grammar, BORDERLINE[0], "where did toby davis die?", lenient=True)[0] == 1


def test_an_original_outside_the_world_is_a_clear_error(grammar):
    with pytest.raises(ValueError, match="no phrasing of the demo world"):
        rate(grammar, "Are zebras striped?", "are zebras stripy?", lenient=True)


def test_with_subject_counts_occurrences():
    tokens = tokenize("who is toby davis 's child , toby davis ?")
    template, count = with_subject(tokens, ("toby", "davis"))
    assert count == 2 and template.count("<subject>") == 2


def _question(i: int, text: str) -> SquadQuestion:
    context = f"Context number {i} holds the answer Paris."
    return SquadQuestion(f"q{i}", text, (SquadAnswer("Paris", context.index("Paris")),),
                         context, f"Title {i}")


def test_world_ratings_round_trip_and_only_accepted_pairs_are_written(tmp_path, grammar):
    """Form -> world raters -> the real raters' import -> acceptance rate -> written set."""
    cases = [*GOOD, *BAD, BORDERLINE]
    pairs = [ParaphrasePair(_question(i, o), p, None, 0.96) for i, (o, p) in enumerate(cases)]
    unrated = tmp_path / "unrated"
    write_test_set(pairs, unrated, "dev")
    out_dir, accepted_dir = tmp_path / "human_eval" / "dev", tmp_path / "sets"
    common = {"pairs_path": unrated / "dev_pairs.parquet", "orig_path": unrated / "dev_orig.json",
              "out_dir": out_dir, "raters": ["A", "B"], "seed": 3, "name": "dev"}
    assert human_evaluation(**common)["pairs_exported"] == len(cases)
    counts = rate_form(out_dir / "form.csv", out_dir / "world.csv", ["A", "B"])
    assert counts["accepted_by_A"] == len(GOOD) and counts["accepted_by_B"] == len(GOOD) + 1
    with open(out_dir / "world.csv", encoding="utf-8") as handle:
        assert handle.readline().startswith("#")
        rows = list(csv.DictReader(handle))
    assert len(rows) == 2 * len(cases) and all(r["fluency"] in "12345" for r in rows)

    result = import_ratings(out_dir / "world.csv", None, ("A", "B"))
    both = acceptance(result.ratings, ("A", "B"), 4)
    assert both["acceptance_rate"] == pytest.approx(len(GOOD) / len(cases))
    assert both["acceptance_rate_B"] == pytest.approx((len(GOOD) + 1) / len(cases))
    assert result.agreement["keep_decision"]["exact"] == pytest.approx(
        (len(cases) - 1) / len(cases))

    stats = human_evaluation(**common, ratings_file=out_dir / "world.csv",
                             accepted_dir=accepted_dir)
    assert stats["rated"] == len(cases) and stats["kept"] == len(GOOD)
    assert stats["acceptance_rate"] == pytest.approx(len(GOOD) / len(cases))
    para = [q.question for q in read_squad(accepted_dir / "dev_para.json").questions()]
    orig = [q.question for q in read_squad(accepted_dir / "dev_orig.json").questions()]
    assert sorted(para) == sorted(p for _, p in GOOD)
    assert sorted(orig) == sorted(o.lower() for o, _ in GOOD)


def test_world_raters_only_rate_the_demo_world():
    from flows.paraphrase import _chosen_dir, _world_rated
    from tasks.layout import Layout

    demo = load_params(ROOT / "params.yaml", profile="demo")
    real = load_params(ROOT / "params.yaml", profile="real")
    off = load_params(ROOT / "params.yaml", profile="demo",
                      overrides={"paraphrase.world_raters": False})
    assert _world_rated(demo, None) and not _world_rated(demo, "ratings.csv")
    assert not _world_rated(real, None) and not _world_rated(off, None)
    assert _chosen_dir(demo, None) == Layout(demo).paraphrase_unrated_sets
    assert _chosen_dir(real, None) == Layout(real).paraphrase_test_sets


def test_export_form_is_what_the_world_raters_fill(tmp_path, grammar):
    form = export_form([{"pair_id": "p1", "original": GOOD[0][0], "paraphrase": GOOD[0][1]}],
                       tmp_path / "form.csv", ("A", "B", "C"))
    counts = rate_form(form, tmp_path / "filled.csv", ("A", "B", "C"), grammar=grammar)
    assert counts["strict_raters"] == "A,C" and counts["lenient_raters"] == "B"
    assert import_ratings(tmp_path / "filled.csv", ["p1"], ("A", "B", "C")).kept == ["p1"]


def test_augmentation_candidates_above_the_bar_are_rated_where_the_world_reads_them(tmp_path):
    """The reader-augmentation flow's candidates (``readers.augmentation.world_raters``), read
    with the training set's grammar (distractor questions included)."""
    (good_q, good_p), (bad_q, bad_p) = GOOD[0], BAD[0]
    settle = "Where did Toby Davis settle?"  # a question about a distractor sentence
    rows = [{"qid": "g", "question": good_q, "paraphrase": good_p, "keep_augmentation": True},
            {"qid": "b", "question": bad_q, "paraphrase": bad_p, "keep_augmentation": True},
            {"qid": "l", "question": BORDERLINE[0], "paraphrase": BORDERLINE[1],
             "keep_augmentation": True},
            {"qid": "x", "question": good_q, "paraphrase": good_p, "keep_augmentation": False},
            {"qid": "d", "question": settle, "paraphrase": "where toby davis did settle?",
             "keep_augmentation": True},
            {"qid": "e", "question": settle, "keep_augmentation": True,
             "paraphrase": "Where did Toby Davis, who spent a long holiday, settle?"},
            {"qid": "w", "question": settle, "keep_augmentation": True,  # word salad
             "paraphrase": "where did toby davis , which was rediscovered by critics , settle ?"},
            {"qid": "o", "question": "How tall is Toby Davis?", "keep_augmentation": True,
             "paraphrase": "what is the height of toby davis?"},
            {"qid": "r", "question": settle, "keep_augmentation": True,
             "paraphrase": "In which town did Toby Davis settle down?"}]
    write_table(tmp_path / "scored.parquet", rows)
    counts = rate_candidates(tmp_path / "scored.parquet", tmp_path / "rated.parquet",
                             "keep_augmentation", ["A", "B"])
    out = read_table(tmp_path / "rated.parquet").to_pylist()
    assert [r["world_verdict"] for r in out] == ["accepted", "rejected", "rejected",
                                                 "below_bar", "rejected", "accepted",
                                                 "rejected", "outside_grammar", "accepted"]
    assert [r["world_keep"] for r in out] == [True, False, False, False, False, True, False,
                                              True, True]
    # the strict rater A rejects the borderline pair, the lenient B accepts it; below the bar
    # and outside the grammar nothing is rated
    assert (out[2]["fluency_A"], out[2]["fluency_B"]) == (3, 4)
    assert out[3]["semantic_A"] is None and out[7]["fluency_B"] is None
    assert out[0]["semantic_B"] == 5
    # a distractor question: a reordering keeps its words but no sentence of the world says
    # it; a clause of a person's class is read as a description (at most 4); a clause of
    # another class is foreign words and broken grammar; a rewording the world's distractor
    # grammar holds ("in which town ... settle down") is the same question (5)
    assert (out[4]["semantic_A"], out[4]["fluency_A"]) == (4, 1)
    assert (out[8]["semantic_A"], out[8]["fluency_A"]) == (5, 5)
    assert (out[5]["semantic_A"], out[5]["fluency_A"]) == (4, 5)
    assert (out[6]["semantic_B"], out[6]["fluency_B"]) == (2, 2)  # half its bigrams attested
    assert counts == {"candidates": 9, "below_bar": 1, "accepted": 3, "rejected": 4,
                      "outside_grammar": 1, "rated": 7, "acceptance_rate": 3 / 7,
                      "accepted_by_A": 3, "accepted_by_B": 4}
    # the test sets' grammar cannot read the distractor question
    grammar_only = rate_candidates(tmp_path / "scored.parquet", tmp_path / "old.parquet",
                                   "keep_augmentation", ["A", "B"], grammar=QuestionGrammar())
    assert grammar_only["outside_grammar"] == 5
    with pytest.raises(ValueError, match=r"scored.parquet: no column 'question'"):
        write_table(tmp_path / "scored.parquet", [{k: v for k, v in r.items() if k != "question"}
                                                  for r in rows])
        rate_candidates(tmp_path / "scored.parquet", tmp_path / "rated.parquet",
                        "keep_augmentation")
