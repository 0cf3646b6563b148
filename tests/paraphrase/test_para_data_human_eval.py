"""Human evaluation round trip: the form, filled ratings, the keep rule, agreement, bad rows."""

from __future__ import annotations

import csv

import pytest

from tasks.io.errors import DataFormatError, SkipCounter
from tasks.paraphrase.human_eval import FORM_COLUMNS, cohen_kappa, export_form, import_ratings

PAIRS = [{"pair_id": f"p{i}", "original": f"Question {i}?", "paraphrase": f"question {i} again?"}
         for i in range(1, 5)]
# (semantic_equivalence, fluency) per pair: rater A, rater B
RATINGS = {"p1": ((5, 5), (5, 5)), "p2": ((4, 5), (3, 5)), "p3": ((2, 4), (2, 4)),
           "p4": ((5, 4), (4, 4))}


def fill(form, out, ratings=RATINGS, edit=None):
    """Copy the exported form with the ratings filled in; ``edit(rows)`` may spoil it."""
    with open(form, encoding="utf-8", newline="") as handle:
        comment = handle.readline()
        rows = list(csv.DictReader(handle))
    for row in rows:
        a, b = ratings[row["pair_id"]]
        row["semantic_equivalence"], row["fluency"] = (a if row["rater"] == "A" else b)
    if edit:
        edit(rows)
    with open(out, "w", encoding="utf-8", newline="") as handle:
        handle.write(comment)
        writer = csv.DictWriter(handle, fieldnames=FORM_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return out


@pytest.fixture
def form(tmp_path):
    return export_form(PAIRS, tmp_path / "form.csv", seed=3)


def test_form_has_two_rows_per_pair_and_empty_ratings(form):
    lines = form.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# Rate each pair") and lines[1] == ",".join(FORM_COLUMNS)
    rows = list(csv.DictReader(lines[1:]))
    assert len(rows) == 8 and {r["rater"] for r in rows} == {"A", "B"}
    assert all(r["semantic_equivalence"] == r["fluency"] == "" for r in rows)
    order_a = [r["pair_id"] for r in rows if r["rater"] == "A"]
    assert order_a == [r["pair_id"] for r in rows if r["rater"] == "B"]
    assert sorted(order_a) == ["p1", "p2", "p3", "p4"]
    with pytest.raises(ValueError, match="2 distinct raters"):
        export_form(PAIRS, form.parent / "x.csv", raters=("A",))


def test_keep_rule_and_agreement_hand_checked(form, tmp_path):
    result = import_ratings(fill(form, tmp_path / "filled.csv"), [p["pair_id"] for p in PAIRS])
    assert sorted(result.kept) == ["p1", "p4"]
    assert result.counts == {"rated": 4, "kept": 2, "bad_rows": 0, "unrated": 0}
    sem, flu, keep = (result.agreement[k] for k in
                      ("semantic_equivalence", "fluency", "keep_decision"))
    # semantic: A 5 4 2 5, B 5 3 2 4: p_o = 1/2, p_e = 1/4 -> kappa 1/3
    assert sem["exact"] == 0.5 and sem["within_one"] == 1.0
    assert sem["cohen_kappa"] == pytest.approx(1 / 3)
    assert sem["quadratic_kappa"] == pytest.approx(5 / 6)
    assert flu["exact"] == 1.0 and flu["cohen_kappa"] == pytest.approx(1.0)
    # keep decision: A 1 1 0 1, B 1 0 0 1: p_o = 3/4, p_e = 1/2 -> kappa 1/2
    assert keep["exact"] == 0.75 and keep["cohen_kappa"] == pytest.approx(0.5)


def test_cohen_kappa_edge_cases():
    assert cohen_kappa([], []) is None
    assert cohen_kappa([5, 5], [5, 5]) is None  # chance agreement is total: undefined
    assert cohen_kappa([1, 2], [2, 1]) == pytest.approx(-1.0)
    with pytest.raises(ValueError):
        cohen_kappa([1], [1, 2])


def _spoil(kind):
    def edit(rows):
        if kind == "out_of_scale":
            rows[0]["fluency"] = "6"
        elif kind == "empty":
            rows[1]["semantic_equivalence"] = ""
        elif kind == "not_a_number":
            rows[2]["fluency"] = "good"
        elif kind == "unknown_pair":
            rows[0]["pair_id"] = "p99"
        elif kind == "unknown_rater":
            rows[0]["rater"] = "C"
        elif kind == "repeated":
            rows.append(dict(rows[0]))
    return edit


@pytest.mark.parametrize("kind, line, message", [
    ("out_of_scale", "line 3", "fluency as an integer rating 1-5"),
    ("empty", "line 4", "an empty cell"),
    ("not_a_number", "line 5", "'good'"),
    ("unknown_pair", "line 3", "a pair_id of the exported form"),
    ("unknown_rater", "line 3", "a rater in"),
    ("repeated", "line 11", "one row per pair and rater"),
])
def test_bad_rows_are_clear_errors(form, tmp_path, kind, line, message):
    filled = fill(form, tmp_path / "filled.csv", edit=_spoil(kind))
    with pytest.raises(DataFormatError, match=message) as info:
        import_ratings(filled, [p["pair_id"] for p in PAIRS])
    assert info.value.where == line and info.value.path == str(filled)


def test_bad_rows_are_counted_in_skip_mode(form, tmp_path):
    filled = fill(form, tmp_path / "filled.csv", edit=_spoil("out_of_scale"))
    skips = SkipCounter("ratings")
    result = import_ratings(filled, [p["pair_id"] for p in PAIRS], on_error="skip",
                            skips=skips)
    # the spoiled row's pair is left with one rater: incomplete, not rated, not kept
    assert result.counts["bad_rows"] == 2 and result.counts["incomplete"] == 1
    assert result.counts["rated"] == 3 and skips.total == 2


def test_missing_rater_and_header(form, tmp_path):
    filled = fill(form, tmp_path / "filled.csv",
                  edit=lambda rows: rows.remove(next(r for r in rows if r["pair_id"] == "p2"
                                                     and r["rater"] == "B")))
    with pytest.raises(DataFormatError, match="ratings from every rater") as info:
        import_ratings(filled)
    assert info.value.where == "pair 'p2'"
    bad = tmp_path / "bad.csv"
    bad.write_text("pair_id,rater,original\np1,A,x\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match="missing paraphrase, semantic_equivalence"):
        import_ratings(bad)


def test_unrated_pairs_are_counted(form, tmp_path):
    filled = fill(form, tmp_path / "filled.csv",
                  edit=lambda rows: rows.__setitem__(slice(None),
                                                     [r for r in rows if r["pair_id"] != "p3"]))
    result = import_ratings(filled, [p["pair_id"] for p in PAIRS])
    assert result.counts["unrated"] == 1 and result.counts["rated"] == 3
