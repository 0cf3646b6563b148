"""tasks.retrieval.evaluate on top of judge_run: accuracy per relation from the whole run,
flags capped at result_ctxs, the mode carried into the metrics JSON."""

import pytest

from tasks.io.entityquestions import EQQuestion
from tasks.retrieval.evaluate import evaluate_relations, question_id, summarise

NFC_E = "\u00e9"
PASSAGES = {
    "1": ("A", "Nothing here."),
    "2": ("B", f"Born in Cr{NFC_E}teil, France."),
    "3": ("C", "Lyon is a city."),
}
QUESTIONS = {
    "P19": [EQQuestion("Where was Ann born?", (f"Cr{NFC_E}teil",)),
            EQQuestion("Where was Bob born?", ("Lyon",))],
    "P20": [EQQuestion("Where did Cy die?", ("France",))],
}
RUN = {
    question_id("P19", 0): [("1", 3.0), ("2", 2.0), ("3", 1.0)],
    question_id("P19", 1): [("3", 2.0), ("1", 1.0)],
    question_id("P20", 0): [("1", 2.0), ("3", 1.5), ("2", 1.0)],
}


def test_entityquestions_and_dpr_conventions_differ_on_an_nfc_answer():
    eq = evaluate_relations(RUN, QUESTIONS, PASSAGES, [1, 3], "eq-string")
    dpr = evaluate_relations(RUN, QUESTIONS, PASSAGES, [1, 3], "dpr-string")
    assert eq["P19"].first_hits == [None, 0]  # NFD answer vs NFC passage: no match
    assert dpr["P19"].first_hits == [1, 0]
    assert eq["P19"].accuracy == {1: 0.5, 3: 0.5}
    assert dpr["P19"].accuracy == {1: 0.5, 3: 1.0}
    assert eq["P20"].first_hits == dpr["P20"].first_hits == [2]
    metrics = summarise(eq, "bm25", "eq-string")
    assert metrics["has_answer_mode"] == "eq-string"
    assert metrics["per_relation"] == {"P19": {"top1": 50.0, "top3": 50.0},
                                       "P20": {"top1": 0.0, "top3": 100.0}}
    assert metrics["macro"] == {"top1": 25.0, "top3": 75.0}


def test_flags_are_capped_but_accuracy_uses_the_whole_run():
    capped = evaluate_relations(RUN, QUESTIONS, PASSAGES, [3], "dpr-string", result_ctxs=1)
    assert capped["P20"].has_answer == [[False]]
    assert capped["P20"].first_hits == [2]
    assert capped["P20"].accuracy == {3: 1.0}
    full = evaluate_relations(RUN, QUESTIONS, PASSAGES, [3], "dpr-string")
    assert full["P19"].has_answer == [[False, True, False], [True, False]]


def test_old_mode_name_is_rejected():
    with pytest.raises(ValueError, match="valid modes"):
        evaluate_relations(RUN, QUESTIONS, PASSAGES, [1], "string")
