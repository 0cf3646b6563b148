"""SQuAD v1.1 metrics (official evaluate-v1.1.py semantics), hand-derived expectations."""

import logging

import pytest

from tasks.evaluation.squad_metrics import (
    SquadScores,
    evaluate_squad,
    exact_match_score,
    f1_score,
    iter_squad_v11,
    metric_max_over_ground_truths,
    normalize_answer,
    per_question_scores,
)


def test_normalize_answer_articles_punctuation_case_whitespace():
    assert normalize_answer("The  Quick, Brown\tfox!") == "quick brown fox"
    assert normalize_answer("an apple a day") == "apple day"
    assert normalize_answer("theory of anathema") == "theory of anathema"  # whole words only
    assert normalize_answer("The") == ""
    assert normalize_answer("A-team") == "ateam"  # punctuation removed before articles
    assert normalize_answer("U.S.") == "us"
    assert normalize_answer("  leading\n\ntrailing  ") == "leading trailing"
    assert normalize_answer("the the the cat") == "cat"


def test_normalize_answer_keeps_non_ascii_punctuation():
    # string.punctuation is ASCII only.
    assert normalize_answer("¿Qué?") == "¿qué"
    assert normalize_answer("1990–1995") == "1990–1995"  # en dash stays
    assert normalize_answer("“Quoted”") == "“quoted”"
    assert normalize_answer("l’été") == "l’été"
    assert normalize_answer("l'été") == "lété"
    # Non-breaking space is white space for str.split.
    assert normalize_answer("a\u00a0b\u2003c") == "b c"


def test_articles_use_unicode_word_boundaries():
    # "é" is a word character, so "the" inside "théa" is not a separate word; "thé" neither.
    assert normalize_answer("thé a") == "thé"
    assert normalize_answer("éthe") == "éthe"


def test_exact_match():
    assert exact_match_score("The Eiffel Tower.", "eiffel tower")
    assert not exact_match_score("Eiffel", "eiffel tower")
    assert exact_match_score("the", "a")  # both normalise to ""


def test_f1_hand_computed():
    assert f1_score("the cat sat", "cat sat on mat") == pytest.approx(2 * 1 * 0.5 / 1.5)
    # Counter overlap: x:1 and y:1 in common -> P = R = 2/3.
    assert f1_score("x x y", "x y y") == pytest.approx(2 / 3)
    # Repeated tokens count as often as they occur on both sides (a multiset, not a set):
    assert f1_score("x x", "x x") == 1.0
    assert f1_score("x x x y", "x y") == pytest.approx(2 * 0.5 * 1.0 / 1.5)
    assert f1_score("dog", "cat") == 0
    assert f1_score("the", "a") == 0  # EM 1 but F1 0, as in the official script
    assert f1_score("Paris", "paris!") == 1.0


def test_max_over_ground_truths():
    golds = ["Denver Broncos", "The Broncos", "Broncos"]
    assert metric_max_over_ground_truths(exact_match_score, "broncos", golds) is True
    assert metric_max_over_ground_truths(f1_score, "Denver", golds) == pytest.approx(2 / 3)


def test_evaluate_squad_totals_and_missing(caplog):
    dataset = [
        ("q1", ["Denver Broncos", "Broncos"]),
        ("q2", ["Santa Clara, California"]),
        ("q3", ["gold"]),
        ("q4", ["Beyoncé"]),
    ]
    predictions = {"q1": "the Broncos", "q2": "Santa Clara", "q4": "beyonce", "extra": "x"}
    with caplog.at_level(logging.WARNING):
        scores = evaluate_squad(dataset, predictions)
    # q1: EM 1, F1 1; q2: P=1, R=2/3 -> F1 0.8; q3 missing: 0; q4: "beyoncé" != "beyonce": 0.
    assert scores.exact_match == 100.0 * 1 / 4
    assert scores.f1 == 100.0 * (1.0 + 0.8) / 4
    assert scores.n_questions == 4
    assert scores.n_missing == 1
    assert scores.missing_ids == ("q3",)
    assert "Unanswered question q3 will receive score 0." in caplog.text
    assert scores.as_official_dict() == {"exact_match": 25.0, "f1": 45.0}


def test_totals_are_bit_identical_to_the_official_arithmetic():
    dataset = [(f"q{i}", ["one two three"]) for i in range(3)]
    predictions = {"q0": "one two three", "q1": "one", "q2": "two three four five"}
    scores = evaluate_squad(dataset, predictions)
    f1_q1 = (2 * (1.0 * 1 / 1) * (1.0 * 1 / 3)) / ((1.0 * 1 / 1) + (1.0 * 1 / 3))
    f1_q2 = (2 * (1.0 * 2 / 4) * (1.0 * 2 / 3)) / ((1.0 * 2 / 4) + (1.0 * 2 / 3))
    f1_total = 0
    for value in (1.0, f1_q1, f1_q2):
        f1_total += value
    assert scores.f1 == 100.0 * f1_total / 3  # exact equality, same order of operations
    assert scores.exact_match == 100.0 * 1 / 3 == 33.333333333333336


def test_per_question_scores():
    dataset = [("a", ["x y"]), ("b", ["z"]), ("c", ["w"])]
    scores = per_question_scores(dataset, {"a": "x", "b": "Z."})
    assert scores == {"a": (0.0, pytest.approx(2 / 3)), "b": (1.0, 1.0), "c": (0.0, 0.0)}


def test_iter_squad_v11_and_errors():
    squad = {
        "version": "1.1",
        "data": [
            {
                "title": "T",
                "paragraphs": [
                    {
                        "context": "ctx",
                        "qas": [
                            {
                                "id": "1",
                                "question": "?",
                                "answers": [{"text": "x", "answer_start": 0}],
                            },
                            {"id": "2", "question": "?", "answers": []},
                        ],
                    }
                ],
            }
        ],
    }
    gold = list(iter_squad_v11(squad))
    assert gold == [("1", ["x"]), ("2", [])]
    assert list(iter_squad_v11(squad["data"])) == gold
    with pytest.raises(ValueError, match="'2' has no gold answer"):
        evaluate_squad(gold, {"1": "x", "2": "b"})
    # Unanswered question without gold answers: only scored 0, like the official script.
    assert evaluate_squad(gold, {"1": "X!"}) == SquadScores(50.0, 50.0, 2, 1, ("2",))
    with pytest.raises(ValueError, match="zero questions"):
        evaluate_squad([], {})
