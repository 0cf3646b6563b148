"""Retrieve-then-read, the pure parts: the question sample, the best span across passages, EM
against several answers, missing reader output, and bad retrieval results (clear errors)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import pytest

from tasks.io.errors import DataFormatError
from tasks.io.squad_predictions import read_predictions, write_predictions
from tasks.reading.open_domain import (
    PassageSpan,
    best_span,
    exact_match_scores,
    question_id,
    sample_positions,
)
from tasks.reading.retrieve_then_read import (
    FUSION_FILE,
    QUESTIONS_FILE,
    load_questions,
    predictions_file,
    read_top_passages,
    write_predictions_per_k,
)
from tasks.reading.retrieve_then_read_tables import evaluate_open_predictions, write_open_tables

CTX = {"bern": "Anna Keller was born in Bern in 1950.",
       "oslo": "Lars Berg was born in Oslo and lived in Bergen.",
       "noise": "The river flows through the valley.",
       "rome": "Maria Rossi, born in Rome, was a painter."}


def _result(question, answers, ctx_ids, title=""):
    return {"question": question, "answers": answers,
            "ctxs": [{"id": pid, "title": title, "text": CTX[pid], "score": 1.0 / (r + 1),
                      "has_answer": any(a in CTX[pid] for a in answers)}
                     for r, pid in enumerate(ctx_ids)]}


QUESTIONS = [("Where was Anna Keller born?", ["Bern"]),
             ("Where was Lars Berg born?", ["Oslo", "Christiania"]),
             ("Where was Maria Rossi born?", ["Rome", "Roma"])]
ORDER = {"bm25": [["bern", "noise"], ["oslo", "noise"], ["rome", "bern"]],
         "dense": [["noise", "bern"], ["noise", "oslo"], ["noise", "rome"]]}


def _write_results(root, relations=("P19",), order=ORDER):
    dirs = {}
    for name, ranked in order.items():
        dirs[name] = root / name
        dirs[name].mkdir(parents=True, exist_ok=True)
        for relation in relations:
            (dirs[name] / f"{relation}.{name}.json").write_text(json.dumps(
                [_result(q, a, ids) for (q, a), ids in zip(QUESTIONS, ranked, strict=True)]))
    return dirs


class FakeReader:
    """Answers the first capitalised word after "in" (score = 10 when it is a gold city,
    1 otherwise); records what it was asked to read."""

    def __init__(self):
        self.asked = []

    def predict(self, examples, batch_size=64):
        @dataclass
        class P:
            text: str
            score: float

        self.asked += [ex.id for ex in examples]
        out = []
        for ex in examples:
            words = ex.context.replace(",", "").replace(".", "").split()
            city = next((w for prev, w in zip(words, words[1:], strict=False)
                         if prev == "in" and w[0].isupper()), "")
            out.append(P(city, 10.0 if city in {"Bern", "Oslo", "Rome"} else 1.0))
        return out


def test_sample_is_deterministic_sorted_and_per_relation():
    a = sample_positions("P19", 300, 10, seed=0)
    assert a == sample_positions("P19", 300, 10, seed=0)
    assert a == sorted(a) and len(set(a)) == 10 and all(0 <= i < 300 for i in a)
    assert a != sample_positions("P36", 300, 10, seed=0)
    assert a != sample_positions("P19", 300, 10, seed=1)
    assert sample_positions("P19", 4, 10, seed=0) == [0, 1, 2, 3]
    assert sample_positions("P19", 0, 10, seed=0) == []
    with pytest.raises(ValueError):
        sample_positions("P19", 5, 0, seed=0)


def test_best_span_takes_the_max_score_over_passages():
    spans = [PassageSpan("low", 1.0), None, PassageSpan("high", 5.0), PassageSpan("tie", 5.0)]
    choice = best_span(spans)
    assert (choice.text, choice.score, choice.rank) == ("high", 5.0, 2)  # tie: better rank
    assert best_span([PassageSpan("only", -3.0)]).text == "only"  # negative scores count
    none = best_span([])
    assert (none.text, none.rank) == ("", None) and none.score == -math.inf
    assert best_span([None, PassageSpan("x", -math.inf), PassageSpan("y", math.nan)]).rank is None


def test_exact_match_takes_the_max_over_answers_and_lists_missing():
    golds = {"a": ["Christiania", "Oslo"], "b": ["the Rome"], "c": ["Bern"], "d": ["Paris"]}
    scores, missing = exact_match_scores({"a": "Oslo.", "b": "rome", "c": "Bern Zurich",
                                          "extra": "x"}, golds)
    assert scores == {"a": 1.0, "b": 1.0, "c": 0.0, "d": 0.0}
    assert missing == ["d"]
    with pytest.raises(ValueError, match="'e'"):
        exact_match_scores({"e": "x"}, {"e": []})
    with pytest.raises(ValueError, match="'f'"):
        exact_match_scores({"f": "x"}, {"f": "Paris"})


def test_ctx_without_text_names_file_and_record(tmp_path):
    dirs = _write_results(tmp_path)
    broken = json.loads((dirs["dense"] / "P19.dense.json").read_text())
    del broken[1]["ctxs"][0]["text"]
    (dirs["dense"] / "P19.dense.json").write_text(json.dumps(broken))
    with pytest.raises(DataFormatError, match=r"P19\.dense\.json, record 1.*\"text\""):
        load_questions(dirs, per_relation=5, seed=0)


def test_retrievers_must_hold_the_same_questions(tmp_path):
    dirs = _write_results(tmp_path)
    other = json.loads((dirs["dense"] / "P19.dense.json").read_text())
    other[2]["question"] = "Where was someone else born?"
    (dirs["dense"] / "P19.dense.json").write_text(json.dumps(other))
    with pytest.raises(DataFormatError, match=r"P19\.dense\.json, record 2"):
        load_questions(dirs, per_relation=5, seed=0)
    (dirs["dense"] / "P19.dense.json").unlink()
    with pytest.raises(DataFormatError, match="relations"):
        load_questions(dirs, per_relation=5, seed=0)


def test_read_write_and_score_end_to_end(tmp_path):
    dirs = _write_results(tmp_path / "retrieval", relations=("P19", "P20"))
    sample = load_questions(dirs, per_relation=5, seed=0)
    assert [q.id for q in sample.questions] == [question_id(r, i) for r in ("P19", "P20")
                                                for i in range(3)]
    reader = FakeReader()
    spans = read_top_passages(reader, sample, k=2)
    # distinct (question, passage) pairs only: bm25 and dense share them all here
    assert len(reader.asked) == len(set(reader.asked)) == 2 * (2 + 2 + 3)
    out = tmp_path / "rtr"
    counts = write_predictions_per_k(sample, spans, [1, 2], out)
    bm25_1 = read_predictions(predictions_file(out, "bm25", 1))
    dense_1 = read_predictions(predictions_file(out, "dense", 1))
    dense_2 = read_predictions(predictions_file(out, "dense", 2))
    assert bm25_1["P19:0"] == "Bern" and dense_1["P19:0"] == "" and dense_2["P19:0"] == "Bern"
    assert dense_2["P19:1"] == "Oslo"  # the span scoring 10 beats the noise passage's 1
    assert counts["dense"]["top1"]["fewer_passages"] == 0
    # a missing reader output scores 0 and is counted
    partial = dict(bm25_1)
    del partial["P20:2"]
    write_predictions(predictions_file(out, "bm25", 1), partial)
    metrics = evaluate_open_predictions(out, ["bm25", "dense"], [1, 2], "bm25", counts,
                                        n_bootstrap=200)
    bm25, dense = metrics["retrievers"]["bm25"], metrics["retrievers"]["dense"]
    assert bm25["top1"]["missing"] == 1 and bm25["top1"]["missing_ids"] == ["P20:2"]
    assert bm25["top1"]["per_relation"]["P20"]["exact_match"] == pytest.approx(200 / 3, abs=0.01)
    assert bm25["top1"]["exact_match"] == pytest.approx((100 + 200 / 3) / 2, abs=0.01)
    assert dense["top1"]["exact_match"] == 0.0 and dense["top1"]["answer_recall"] == 0.0
    assert dense["top2"]["exact_match"] == 100.0 and dense["top2"]["answer_recall"] == 100.0
    assert bm25["top1"]["counts"] == counts["bm25"]["top1"]
    diff = metrics["comparisons"]["bm25 - dense"]["top1"]
    assert diff["difference"] == pytest.approx(100 * 5 / 6, abs=0.01)
    assert diff["ci_low"] <= diff["difference"] <= diff["ci_high"]
    assert metrics["comparisons"]["bm25 - dense"]["top2"]["difference"] == 0.0
    golds = json.loads((out / QUESTIONS_FILE).read_text())
    assert {g["id"] for g in golds} == set(dense_2)
    written = write_open_tables(metrics, tmp_path / "m.json", tmp_path / "r.md", "fake")
    report = (tmp_path / "r.md").read_text()
    assert "| bm25 | 6 |" in report and "bm25 - dense" in report and written["reader"] == "fake"


def test_no_passages_give_the_empty_answer(tmp_path):
    order = {"bm25": [[], ["oslo"], []]}
    dirs = _write_results(tmp_path / "retrieval", order=order)
    sample = load_questions(dirs, per_relation=5, seed=0)
    spans = read_top_passages(FakeReader(), sample, k=1)
    counts = write_predictions_per_k(sample, spans, [1], tmp_path / "rtr")
    preds = read_predictions(predictions_file(tmp_path / "rtr", "bm25", 1))
    assert preds == {"P19:0": "", "P19:1": "Oslo", "P19:2": ""}
    assert counts["bm25"]["top1"]["fewer_passages"] == 2
    assert counts["bm25"]["top1"]["no_span"] == 2


class FooledReader(FakeReader):
    """Like FakeReader, but surest of "Oslo" wherever it appears (a span of the asked type in a
    passage about someone else)."""

    def predict(self, examples, batch_size=64):
        out = super().predict(examples, batch_size)
        for p in out:
            if p.text == "Oslo":
                p.score = 50.0
        return out


def test_fused_choice_files_weights_and_gains(tmp_path):
    order = {"bm25": [["bern", "oslo"], ["oslo", "noise"], ["rome", "oslo"]]}
    dirs = _write_results(tmp_path / "retrieval", relations=("P19", "P20", "P27"), order=order)
    sample = load_questions(dirs, per_relation=5, seed=0)
    spans = read_top_passages(FooledReader(), sample, k=2)
    out = tmp_path / "rtr"
    write_predictions_per_k(sample, spans, [1, 2], out, fusion=True, grid_points=11)
    span_2 = read_predictions(predictions_file(out, "bm25", 2))
    fused_2 = read_predictions(predictions_file(out, "bm25", 2, fused=True))
    assert not predictions_file(out, "bm25", 1, fused=True).exists()  # k = 1: nothing to fuse
    # the raw span score takes "Oslo" from the second passage; the fused score, its weight
    # fitted on the other relations (the same questions), keeps the top passage's answer
    assert span_2["P19:0"] == "Oslo" and fused_2["P19:0"] == "Bern"
    assert fused_2["P19:1"] == "Oslo" and fused_2["P19:2"] == "Rome"
    fits = json.loads((out / "bm25" / FUSION_FILE).read_text())
    assert set(fits) == {"top2"} and set(fits["top2"]["weights"]) == {"P19", "P20", "P27"}
    assert all(0.0 < w <= 1.0 for w in fits["top2"]["weights"].values())
    metrics = evaluate_open_predictions(out, ["bm25"], [1, 2], "bm25", n_bootstrap=200)
    block = metrics["retrievers"]["bm25"]
    assert block["top2"]["exact_match"] == pytest.approx(100 / 3, abs=0.01)
    assert block["top2_fused"]["exact_match"] == 100.0
    assert block["top2_fused"]["answer_recall"] == block["top2"]["answer_recall"]
    assert block["top2_fused"]["fusion"] == fits["top2"]
    gain = metrics["fusion_gains"]["bm25"]["top2_fused"]
    assert gain["difference"] == pytest.approx(100 * 2 / 3, abs=0.01)
    write_open_tables(metrics, tmp_path / "m.json", tmp_path / "r.md", "fake")
    report = (tmp_path / "r.md").read_text()
    assert "EM@2 fused" in report and "Fused score vs best span score" in report
    # results without passage scores cannot be fused: said so, no fused file, nothing stale
    for path in dirs["bm25"].glob("*.json"):
        records = json.loads(path.read_text())
        for record in records:
            for ctx in record["ctxs"]:
                del ctx["score"]
        path.write_text(json.dumps(records))
    unscored = load_questions(dirs, per_relation=5, seed=0)
    write_predictions_per_k(unscored, spans, [1, 2], out, fusion=True)
    assert not predictions_file(out, "bm25", 2, fused=True).exists()
    assert "skipped" in json.loads((out / "bm25" / FUSION_FILE).read_text())["top2"]
    write_predictions_per_k(sample, spans, [1, 2], out, fusion=False)
    assert not (out / "bm25" / FUSION_FILE).exists()
    assert "top2_fused" not in evaluate_open_predictions(
        out, ["bm25"], [1, 2], "bm25", n_bootstrap=50)["retrievers"]["bm25"]
