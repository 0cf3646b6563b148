"""A paraphrased set's orig vs para scores by what each paraphrase changes
(tasks/reading/edit_groups.py): the groups, the per-group drop and its CI, bad input."""

from __future__ import annotations

import pytest

from tasks.evaluation.over_seeds import SeedInterval
from tasks.io.errors import DataFormatError
from tasks.io.squad import write_squad
from tasks.io.squad_predictions import write_predictions
from tasks.paraphrase.edits import EDIT_GROUPS, aligned_edits, edit_group
from tasks.reading.edit_groups import (
    edit_group_scores,
    edit_groups_over_seeds,
    score_edit_groups,
)
from tasks.reading.scoring import read_squad_v11
from tasks.reporting.reader_tables import edit_group_rows

CONTEXT = "Anna Berg was born in Oslo. Anna Berg later moved to Bergen with her husband."
#: (original, paraphrase, answer): drops "born" of the answer's sentence; adds "husband", a
#: word of the other sentence; changes "city" to "town" (neither in the sentence); changes no
#: content word.
PAIRS = [("Where was Anna Berg born?", "What is Anna Berg's hometown?", "Oslo"),
         ("Where was Anna Berg born?", "Where was Anna Berg, who has a husband, born?", "Oslo"),
         ("Which city did Anna Berg move to?", "Which town did Anna Berg move to?", "Bergen"),
         ("What city was Anna Berg born in?", "Which city was Anna Berg born in?", "Oslo")]


def _squad(questions: list[tuple[str, str, str]]) -> dict:
    return {"version": "1.1", "data": [{"title": f"Title_{i}", "paragraphs": [{
        "context": CONTEXT, "qas": [{"id": qid, "question": question, "answers": [
            {"text": answer, "answer_start": CONTEXT.index(answer)}]}]}]}
        for i, (qid, question, answer) in enumerate(questions)]}


@pytest.fixture()
def files(tmp_path):
    orig = write_squad(tmp_path / "dev_orig.json",
                       _squad([(f"o{i}", o, a) for i, (o, _, a) in enumerate(PAIRS)]))
    para = write_squad(tmp_path / "dev_para.json",
                       _squad([(f"p{i}", p, a) for i, (_, p, a) in enumerate(PAIRS)]))
    # the reader answers every original; on the paraphrases it misses the first two
    preds = {"r": (write_predictions(tmp_path / "o.json", {"o0": "Oslo", "o1": "Oslo",
                                                            "o2": "Bergen", "o3": "Oslo"}),
                   write_predictions(tmp_path / "p.json", {"p0": "Bergen", "p1": "Bergen",
                                                            "p2": "Bergen", "p3": "Oslo"}))}
    return orig, para, preds


def test_each_pair_falls_in_its_group(files):
    orig, para, _ = files
    assert [edit_group(e) for e in aligned_edits(orig, para)] == list(EDIT_GROUPS)


def test_the_drop_is_scored_per_group(files):
    orig, para, preds = files
    scores = score_edit_groups(preds, orig, para, n_bootstrap=50)
    assert scores["pairs"] == 4
    assert [g["pairs"] for g in scores["groups"].values()] == [1, 1, 1, 1]
    for group in ("removes_answer_sentence_word", "adds_context_word"):
        dropped = scores["groups"][group]["readers"]["r"]["exact_match"]
        assert (dropped["orig"], dropped["para"], dropped["drop"]) == (100.0, 0.0, 100.0)
    for group in ("other_content_change", "no_content_change"):
        em = scores["groups"][group]["readers"]["r"]["exact_match"]
        assert (em["orig"], em["para"], em["drop"]) == (100.0, 100.0, 0.0)
    header, rows = edit_group_rows(scores)
    assert header[:2] == ["the paraphrase", "pairs"] and len(rows) == 4
    assert rows[0][:4] == ["drops a word of the answer's sentence", 1, "100.00", "0.00"]
    assert rows[1][:4] == ["adds a word of another sentence of the context", 1, "100.00",
                           "0.00"]


def test_an_empty_group_has_no_scores_and_a_missing_prediction_scores_zero(files):
    orig, para, preds = files
    data = read_squad_v11(orig), read_squad_v11(para)
    scores = edit_group_scores(*data, ["no_content_change"] * 4,
                               {"r": ({"o0": "Oslo"}, {})}, n_bootstrap=20)
    assert scores["groups"]["removes_answer_sentence_word"] == {"pairs": 0,
                                                                 "readers": {"r": None}}
    em = scores["groups"]["no_content_change"]["readers"]["r"]["exact_match"]
    assert (em["orig"], em["para"]) == (25.0, 0.0)
    assert edit_group_rows(scores)[1][0][2:] == ["-", "-", "-"]


def test_bad_input_is_a_clear_error(files, tmp_path):
    orig, para, preds = files
    data = read_squad_v11(orig), read_squad_v11(para)
    with pytest.raises(ValueError, match="align by position"):
        edit_group_scores(*data, ["no_content_change"] * 2, {})
    with pytest.raises(ValueError, match="unknown edit groups"):
        edit_group_scores(*data, ["no_content_change", "bold", "bold", "bold"], {})
    short = write_squad(tmp_path / "short_para.json",
                        _squad([("p0", PAIRS[0][1], PAIRS[0][2])]))
    with pytest.raises(DataFormatError, match="short_para.json"):
        score_edit_groups(preds, orig, short)


def test_the_drop_per_group_over_reader_seeds(files, tmp_path):
    orig, para, preds = files
    # a second draw that misses the first and the third paraphrase, not the second
    second = (write_predictions(tmp_path / "o2.json", {"o0": "Oslo", "o1": "Oslo",
                                                        "o2": "Bergen", "o3": "Oslo"}),
              write_predictions(tmp_path / "p2.json", {"p0": "Bergen", "p1": "Oslo",
                                                        "p2": "Oslo", "p3": "Oslo"}))
    result = edit_groups_over_seeds(orig, para, {42: preds["r"], 1: second},
                                    SeedInterval(n=50))
    assert result["seeds"] == [42, 1] and result["pairs"] == 4
    groups = result["groups"]
    assert groups["all"]["per_seed"] == [50.0, 50.0]
    assert groups["adds_context_word"]["per_seed"] == [100.0, 0.0]
    assert groups["removes_answer_sentence_word"]["per_seed"] == [100.0, 100.0]
    assert groups["removes_answer_sentence_word"]["summary"]["mean"] == 100.0
    assert groups["other_content_change"]["per_seed"] == [0.0, 100.0]
    summary = groups["other_content_change"]["summary"]
    assert (summary["mean"], summary["seeds"]) == (50.0, 2)
    assert summary["two_level_low"] <= 50.0 <= summary["two_level_high"]
    assert groups["no_content_change"]["summary"]["sd"] == 0.0
    with pytest.raises(ValueError, match="no seeds"):
        edit_groups_over_seeds(orig, para, {})
