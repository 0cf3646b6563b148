"""Before vs after augmentation over reader training seeds: per-seed EM/F1 and gains, their
mean, sample sd and Student-t interval, the paraphrased questions' gain minus their originals',
the report rows, and the config refusing a repeated seed."""

from __future__ import annotations

import math

import pytest

from tasks.config import ReadersConfig
from tasks.evaluation.crossed_bootstrap import crossed_bootstrap
from tasks.io.errors import DataFormatError
from tasks.io.squad import build_squad, write_squad
from tasks.io.squad_predictions import write_predictions
from tasks.paraphrase.edits import EDIT_GROUPS
from tasks.reading.augmentation_tables import write_augmentation_tables
from tasks.reading.training_seeds import compare_over_seeds, seed_summary
from tasks.reporting.reader_tables import (
    seed_drop_rows,
    seed_edit_group_rows,
    seed_gain_rows,
    seed_pattern_rows,
)

#: t quantiles (0.975) for 2 and 1 degrees of freedom, from a printed table.
T_975 = {2: 4.302652729, 1: 12.70620474}
CONTEXT = "Ada Park was born in Lyon. She moved to Oslo in 1990 and to Rome in 2001."
ANSWERS = ["Lyon", "Oslo", "1990", "Rome"]


def test_seed_summary_is_mean_sample_sd_and_student_t_interval():
    s = seed_summary([1.0, 2.0, 6.0])
    sd = math.sqrt(7.0)  # squared deviations 4 + 1 + 9 over n - 1 = 2
    half = T_975[2] * sd / math.sqrt(3)
    assert s == {"seeds": 3, "mean": 3.0, "sd": round(sd, 2), "ci_low": round(3.0 - half, 2),
                 "ci_high": round(3.0 + half, 2), "significant": False, "above_zero": 3,
                 "below_zero": 0}
    tight = seed_summary([5.0, 5.5, 4.5, -0.0])
    assert tight["significant"] is False and tight["below_zero"] == 0
    assert seed_summary([5.0, 5.2, 4.8])["significant"] is True
    one = seed_summary([-2.5])
    assert (one["mean"], one["sd"], one["ci_low"], one["below_zero"]) == (-2.5, None, None, 1)
    with pytest.raises(ValueError, match="no seed values"):
        seed_summary([])
    with pytest.raises(ValueError, match="0 < confidence < 1"):
        seed_summary([1.0, 2.0], confidence=1.0)


def _data(tmp_path, name: str, prefix: str) -> tuple:
    qas = [(f"{prefix}{i}", f"question {i}?", [(a, None)]) for i, a in enumerate(ANSWERS)]
    path = tmp_path / f"{name}.json"
    write_squad(path, build_squad("1.1", [("Ada Park", [(CONTEXT, qas)])]))
    return path, [q for q, _, _ in qas]


def _predictions(tmp_path, tag: str, ids: list[str], right: int) -> object:
    """The first ``right`` questions answered correctly, the rest wrongly ("Paris")."""
    path = tmp_path / "pred" / f"{tag}.json"
    return write_predictions(path, {q: (ANSWERS[i] if i < right else "Paris")
                                    for i, q in enumerate(ids)})


@pytest.fixture()
def seeds_metrics(tmp_path):
    orig, orig_ids = _data(tmp_path, "dev_orig", "o")
    para, para_ids = _data(tmp_path, "dev_para", "p")
    empty = tmp_path / "adv_orig.json"
    write_squad(empty, build_squad("1.1", []))
    files = {"dev_orig": orig, "dev_para": para, "adv_orig": empty}
    # correct answers out of 4: (orig before, orig after, para before, para after) per seed
    right = {42: (2, 3, 1, 3), 7: (3, 3, 2, 4)}
    runs = {}
    for seed, (ob, oa, pb, pa) in right.items():
        runs[seed] = {
            "before": {"dev_orig": _predictions(tmp_path, f"{seed}ob", orig_ids, ob),
                       "dev_para": _predictions(tmp_path, f"{seed}pb", para_ids, pb),
                       "adv_orig": empty},
            "after": {"non_adversarial": {
                "dev_orig": _predictions(tmp_path, f"{seed}oa", orig_ids, oa),
                "dev_para": _predictions(tmp_path, f"{seed}pa", para_ids, pa),
                "adv_orig": empty}}}
    return compare_over_seeds(runs, files)


def test_per_seed_scores_gains_and_their_summary(seeds_metrics):
    m = seeds_metrics
    assert m["seeds"] == [42, 7] and m["confidence"] == 0.95
    block = m["kinds"]["non_adversarial"]["sets"]
    assert block["adv_orig"] == {"questions": 0}
    orig, para = block["dev_orig"], block["dev_para"]
    assert orig["questions"] == 4
    assert orig["per_seed"]["42"] == {"before": {"exact_match": 50.0, "f1": 50.0},
                                      "after": {"exact_match": 75.0, "f1": 75.0},
                                      "exact_match_gain": 25.0, "f1_gain": 25.0}
    assert orig["per_seed"]["7"]["exact_match_gain"] == 0.0
    assert orig["before_exact_match"]["mean"] == 62.5
    gain = orig["exact_match_gain"]
    half = T_975[1] * math.sqrt(2 * 12.5 ** 2) / math.sqrt(2)
    assert (gain["mean"], gain["sd"], gain["above_zero"]) == (12.5, round(
        math.sqrt(2 * 12.5 ** 2), 2), 1)
    assert gain["ci_low"] == round(12.5 - half, 2) and gain["ci_high"] == round(12.5 + half, 2)
    assert para["exact_match_gain"]["mean"] == 50.0 and para["exact_match_gain"]["sd"] == 0.0
    assert para["exact_match_gain"]["significant"] is True  # sd 0: the interval is the point


def test_two_level_interval_resamples_seeds_and_questions(seeds_metrics):
    """Per question, in points: dev_orig gains [0, 0, 100, 0] (seed 42) and [0, 0, 0, 0] (7);
    dev_para gains [0, 100, 100, 0] and [0, 0, 100, 100]."""
    sets = seeds_metrics["kinds"]["non_adversarial"]["sets"]
    assert seeds_metrics["n_bootstrap"] == 1000 and seeds_metrics["bootstrap_seed"] == 0
    _, low, high = crossed_bootstrap([[0, 0, 100, 0], [0, 0, 0, 0]], n=1000, seed=0)
    gain = sets["dev_orig"]["exact_match_gain"]
    assert (gain["two_level_low"], gain["two_level_high"]) == (round(low, 2), round(high, 2))
    # both seeds gain 50 on dev_para: the t-interval over seeds is the point, but 2 of 4
    # questions per seed carry it, and the two-level interval says so
    para = sets["dev_para"]["exact_match_gain"]
    assert (para["ci_low"], para["ci_high"]) == (50.0, 50.0)
    assert para["two_level_low"] < 50.0 < para["two_level_high"]
    _, low, high = crossed_bootstrap([[0, 100, 100, 0], [0, 0, 100, 100]], n=1000, seed=0)
    assert (para["two_level_low"], para["two_level_high"]) == (round(low, 2), round(high, 2))
    drop = seeds_metrics["kinds"]["non_adversarial"]["paraphrase_drop"]["dev"]["before"]
    assert {"two_level_low", "two_level_high", "two_level_significant"} <= set(drop["f1"])


def test_orig_and_para_files_of_different_lengths_are_refused(tmp_path):
    orig, orig_ids = _data(tmp_path, "dev_orig", "o")
    para = tmp_path / "dev_para.json"
    qas = [("p0", "question?", [("Lyon", None)])]
    write_squad(para, build_squad("1.1", [("Ada Park", [(CONTEXT, qas)])]))
    preds = {"dev_orig": _predictions(tmp_path, "o", orig_ids, 2),
             "dev_para": _predictions(tmp_path, "p", ["p0"], 1)}
    runs = {42: {"before": preds, "after": {"non_adversarial": preds}}}
    with pytest.raises(DataFormatError, match=r"dev_para\.json, questions: expected 4 questions"):
        compare_over_seeds(runs, {"dev_orig": orig, "dev_para": para})


def test_paraphrased_gain_minus_original_gain_per_set(seeds_metrics):
    pattern = seeds_metrics["kinds"]["non_adversarial"]["paraphrase_minus_original"]
    assert list(pattern) == ["dev"]  # adv has no para file
    assert pattern["dev"]["per_seed"] == {"42": {"exact_match": 25.0, "f1": 25.0},
                                          "7": {"exact_match": 50.0, "f1": 50.0}}
    assert pattern["dev"]["exact_match"]["mean"] == 37.5
    assert pattern["dev"]["exact_match"]["above_zero"] == 2


def test_paraphrase_drop_of_the_readers_before_and_after(seeds_metrics):
    drop = seeds_metrics["kinds"]["non_adversarial"]["paraphrase_drop"]
    assert list(drop) == ["dev"]
    before, after = drop["dev"]["before"], drop["dev"]["after"]
    assert before["per_seed"] == {"42": {"exact_match": 25.0, "f1": 25.0},
                                  "7": {"exact_match": 25.0, "f1": 25.0}}
    assert (before["exact_match"]["mean"], before["exact_match"]["sd"]) == (25.0, 0.0)
    assert after["per_seed"]["7"]["exact_match"] == -25.0
    assert after["exact_match"]["mean"] == -12.5 and after["exact_match"]["below_zero"] == 1


def test_paraphrase_drop_by_edit_group_over_seeds(seeds_metrics):
    by_edit = seeds_metrics["kinds"]["non_adversarial"]["paraphrase_drop_by_edit"]
    assert list(by_edit) == ["dev"]
    drop = seeds_metrics["kinds"]["non_adversarial"]["paraphrase_drop"]["dev"]
    for side in ("before", "after"):
        groups = by_edit["dev"][side]["groups"]
        assert groups["all"]["per_seed"] == [drop[side]["per_seed"][s]["exact_match"]
                                             for s in ("42", "7")]
        # the paraphrases repeat the originals: every pair changes no content word
        assert groups["no_content_change"]["per_seed"] == groups["all"]["per_seed"]
        assert groups["removes_answer_sentence_word"] == {"pairs": 0, "per_seed": [],
                                                          "summary": None}
    assert by_edit["dev"]["after"]["groups"]["all"]["summary"]["mean"] == -12.5
    header, rows = seed_edit_group_rows(seeds_metrics)
    assert header[:5] == ["reader", "set", "the paraphrase", "pairs", "EM drop per seed"]
    assert rows[0][:6] == ["before augmentation", "dev", "any (the whole set)", 4,
                           "+25.00, +25.00", "+25.00 (0.00)"]
    assert rows[1][3:] == [0, "-", "-", "-", "-"]
    # the whole set and one row per edit group
    assert [r[0] for r in rows].count("after: non_adversarial") == 1 + len(EDIT_GROUPS)


def test_report_rows_and_markdown_section(seeds_metrics, tmp_path):
    header, rows = seed_gain_rows(seeds_metrics)
    assert header[5] == "EM gain per seed (42, 7)"
    by_file = {r[1]: r for r in rows}
    assert by_file["dev_orig"][5] == "+25.00, +0.00"
    assert by_file["dev_orig"][9] == "1 of 2" and by_file["dev_para"][7] == "[+50.00, +50.00] *"
    assert header[6:] == ["EM gain mean (sd)", "EM gain t-interval", "EM gain two-level CI",
                          "seeds gaining EM", "F1 gain mean (sd)", "F1 gain t-interval",
                          "F1 gain two-level CI"]
    assert by_file["adv_orig"][2] == 0
    header, rows = seed_drop_rows(seeds_metrics)
    assert header[2] == "EM orig - para per seed (42, 7)"
    assert [r[:4] for r in rows] == [["before augmentation", "dev", "+25.00, +25.00",
                                      "+25.00 (0.00)"],
                                     ["after: non_adversarial", "dev", "+0.00, -25.00",
                                      "-12.50 (17.68)"]]
    header, rows = seed_pattern_rows(seeds_metrics)
    assert rows == [["non_adversarial", "dev", "+25.00, +50.00", "+37.50 (17.68)",
                     rows[0][4], rows[0][5], "2 of 2", "+37.50 (17.68)", rows[0][8], rows[0][9]]]
    assert rows[0][5].startswith("[") and rows[0][9].startswith("[")
    metrics = {"n_bootstrap": 10, "confidence": 0.95, "kinds": {"non_adversarial": {
        "augmentation": {}, "sets": {"dev_orig": {"questions": 0}}}}, "seeds": seeds_metrics}
    write_augmentation_tables(metrics, tmp_path / "m.json", tmp_path / "r.md")
    text = (tmp_path / "r.md").read_text()
    assert "## Over reader training seeds" in text and "| non_adversarial | dev | +25.00, +50.00" \
        in text
    assert "| before augmentation | dev | +25.00, +25.00 |" in text
    assert ("| before augmentation | dev | changes no content word | 4 | +25.00, +25.00 |"
            in text)


def test_a_repeated_training_seed_is_refused():
    with pytest.raises(ValueError, match=r"extra_seeds \[1, 42\] repeats seed\(s\) \[42\]"):
        ReadersConfig(augmentation={"extra_seeds": [1, 42]})
    with pytest.raises(ValueError, match=r"repeats seed\(s\) \[3\]"):
        ReadersConfig(model={"seed": 5}, augmentation={"extra_seeds": [3, 3]})
    assert ReadersConfig(augmentation={"extra_seeds": [1, 2]}).augmentation.extra_seeds == (1, 2)


def test_the_readers_before_augmentation_are_grouped_once_for_every_kind(tmp_path, monkeypatch):
    import tasks.reading.training_seeds as training_seeds

    orig, orig_ids = _data(tmp_path, "dev_orig", "o")
    para, para_ids = _data(tmp_path, "dev_para", "p")
    files = {"dev_orig": orig, "dev_para": para}
    preds = {"dev_orig": _predictions(tmp_path, "o", orig_ids, 2),
             "dev_para": _predictions(tmp_path, "p", para_ids, 1)}
    runs = {42: {"before": preds, "after": {"non_adversarial": preds, "adversarial": preds}}}
    calls = []
    real = training_seeds.edit_groups_over_seeds
    monkeypatch.setattr(training_seeds, "edit_groups_over_seeds",
                        lambda *args: calls.append(args) or real(*args))
    kinds = compare_over_seeds(runs, files)["kinds"]
    assert len(calls) == 3  # before once, after once per kind
    assert kinds["adversarial"]["paraphrase_drop_by_edit"]["dev"]["before"] == \
        kinds["non_adversarial"]["paraphrase_drop_by_edit"]["dev"]["before"]
