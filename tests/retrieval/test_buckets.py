"""Accuracy per frequency bucket (Figure 1): hand-made runs over a tiny bucket layout."""

from __future__ import annotations

import csv
import json

import pyarrow as pa
import pytest

from tasks.io.entityquestions import EQQuestion, write_eq_file
from tasks.io.passages import Passage, write_passages
from tasks.io.tables import write_table
from tasks.io.trec import write_trec_run
from tasks.reporting.figures import (
    POOLED,
    bucket_accuracy_rows,
    bucket_axis_label,
    pooled_bucket_rows,
    wilson_interval,
)
from tasks.retrieval.buckets import evaluate_buckets, plot_buckets
from tasks.retrieval.query_sets import (
    bucket_path,
    bucket_query_set,
    group_key,
    load_bucket_questions,
    write_query_set,
)

SETS = ("rand-ent", "train-ent")
RELATIONS = ("P19", "P36")
N_BUCKETS = 3


@pytest.fixture
def world(tmp_path):
    """Passages 1-4; P19 asks birthplaces, P36 capitals; train-ent P36 bucket 2 is empty."""
    passages = tmp_path / "psgs_w100.tsv"
    write_passages(passages, [Passage("1", "Nothing here.", "A"),
                              Passage("2", "Ann was born in Lyon.", "Ann"),
                              Passage("3", "Paris is the capital of France.", "France"),
                              Passage("4", "Bob was born in Oslo.", "Bob")])
    dataset = tmp_path / "dataset"
    lyon, oslo, paris = ("Lyon",), ("Oslo",), ("Paris",)
    content = {
        ("rand-ent", "P19"): [[EQQuestion("Where was Ann born?", lyon),
                               EQQuestion("Where was Bob born?", oslo)],
                              [EQQuestion("Where was Ann born?", lyon)],
                              [EQQuestion("Where was Bob born?", oslo)]],
        ("rand-ent", "P36"): [[EQQuestion("What is the capital of France?", paris)]] * 3,
        ("train-ent", "P19"): [[EQQuestion("Where was Bob born?", oslo)]] * 3,
        ("train-ent", "P36"): [[EQQuestion("What is the capital of France?", paris)]] * 2 + [[]],
    }
    for (bucket_set, relation), buckets in content.items():
        for bucket, questions in enumerate(buckets):
            path = bucket_path(dataset, bucket_set, relation, bucket)
            path.parent.mkdir(parents=True, exist_ok=True)
            if questions:
                write_eq_file(path, questions)
            else:
                path.write_text("[]", encoding="utf-8")
    # Every question: top-1 is passage 1 (no answer); P19 rand-ent bucket 0 question 0 and
    # the P36 questions have their answer at rank 2; nothing else is found.
    groups = load_bucket_questions(dataset, SETS, RELATIONS, N_BUCKETS)
    bm25, dense = {}, {}
    for key, questions in groups.items():
        for i, question in enumerate(questions):
            qid = f"{key}:{i:06d}"
            bm25[qid] = [("1", 2.0), ("3" if "capital" in question.question else "2", 1.0)]
            dense[qid] = [("1", 0.9)]
    write_trec_run(tmp_path / "bm25.trec", bm25, tag="bm25")
    write_trec_run(tmp_path / "dense.trec", dense, tag="dense")
    table = tmp_path / "questions.parquet"
    write_table(table, pa.table({
        "collection": ["common-random-buckets"] * 3 + ["nq-seen-buckets", "entityquestions"],
        "relation": ["P19", "P19", "P36", "P19", "P19"],
        "bucket": pa.array([0, 0, 1, 2, 0], pa.int32()),
        "subject_frequency": pa.array([3, 9, 40, 500, 7], pa.int64()),
    }))
    return tmp_path, dataset, passages, table


def test_bucket_metrics_plot_and_csv(world):
    root, dataset, passages, table = world
    queries = write_query_set(bucket_query_set(dataset, SETS, RELATIONS, N_BUCKETS),
                              root / "buckets.json")
    metrics = evaluate_buckets({"bm25": root / "bm25.trec", "dense": root / "dense.trec"},
                               queries, passages, root / "m.json", [1, 2],
                               bucket_order="ascending", questions_table=table, k=2)
    assert json.loads((root / "m.json").read_text()) == metrics
    rand, train = metrics["sets"]["rand-ent"], metrics["sets"]["train-ent"]
    assert rand["P19"]["bucket0"] == {"questions": 2, "hyperlinks": [3, 9],
                                      "bm25": {"top1": 0.0, "top2": 50.0},
                                      "dense": {"top1": 0.0, "top2": 0.0}}
    assert rand["P19"]["bucket1"]["bm25"] == {"top1": 0.0, "top2": 100.0}
    assert rand["P19"]["bucket2"]["bm25"] == {"top1": 0.0, "top2": 0.0}  # Bob -> passage 2
    assert rand["P36"]["bucket1"] == {"questions": 1, "hyperlinks": [40, 40],
                                      "bm25": {"top1": 0.0, "top2": 100.0},
                                      "dense": {"top1": 0.0, "top2": 0.0}}
    assert train["P19"]["bucket2"]["hyperlinks"] == [500, 500]
    assert train["P36"]["bucket2"] == {"questions": 0, "bm25": None, "dense": None}
    assert metrics["bucket0"] == "rarest subjects"
    rise = metrics["contrasts"]["popularity_rise"]  # top-2, rand-ent pooled over relations

    def pooled(bucket: str, name: str) -> float:
        cells = [rand[r][bucket] for r in RELATIONS if rand[r][bucket]["questions"]]
        return sum(c["questions"] * c[name]["top2"] for c in cells) / sum(
            c["questions"] for c in cells)

    first, last = rise["rare_bucket"], rise["popular_bucket"]
    assert (first, rise["rare_questions"]) == ("bucket0", sum(
        rand[r]["bucket0"]["questions"] for r in RELATIONS))
    for name in ("bm25", "dense"):
        assert rise["rise"][name]["difference"] == round(pooled(last, name)
                                                         - pooled(first, name), 2)
    assert set(metrics["contrasts"]["seen_minus_random"]["difference"]) == {"bm25", "dense"}

    png, csv_path = plot_buckets(root / "m.json", 2, root / "fig.png", root / "fig.csv")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with open(csv_path, newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["set", "relation", "bucket", "retriever", "accuracy", "questions"]
    assert len(rows) - 1 == (2 * 2 * 3 - 1) * 2  # empty bucket left out
    assert ["rand-ent", "P19", "0", "bm25", "50.0", "2"] in rows
    assert ["train-ent", "P36", "1", "dense", "0.0", str(train["P36"]["bucket1"]["questions"])] \
        in rows
    assert not any(r[:3] == ["train-ent", "P36", "2"] for r in rows)
    pooled_rows = pooled_bucket_rows(bucket_accuracy_rows(metrics, 2))
    for bucket in range(N_BUCKETS):  # the figure's first panel: the findings' pooling
        name = f"bucket{bucket}"
        assert ["rand-ent", POOLED, bucket, "bm25", round(pooled(name, "bm25"), 2),
                sum(rand[r][name]["questions"] for r in RELATIONS)] in pooled_rows


def test_wilson_intervals_hold_the_accuracy_and_narrow_with_questions():
    assert wilson_interval(50.0, 0) == (0.0, 100.0)
    low, high = wilson_interval(100.0, 1)  # one question answered: still wide, never past 100
    assert high == 100.0 and 0 < low < 25
    assert wilson_interval(0.0, 8)[0] == 0.0
    widths = [high - low for low, high in (wilson_interval(30.0, n) for n in (10, 100, 1000))]
    assert widths == sorted(widths, reverse=True)
    low, high = wilson_interval(30.0, 1000)  # textbook: p = 0.3, n = 1000 -> [27.2, 32.9]
    assert (round(low, 1), round(high, 1)) == (27.2, 32.9)


def test_question_ids_are_unique_and_missing_files_are_named(world):
    _, dataset, _, _ = world
    groups = load_bucket_questions(dataset, SETS, RELATIONS, N_BUCKETS)
    assert list(groups)[:2] == [group_key("rand-ent", "P19", 0), "rand-ent/P19/bucket1"]
    qids = [f"{key}:{i:06d}" for key, items in groups.items() for i in range(len(items))]
    assert len(qids) == len(set(qids)) == 2 + 1 + 1 + 3 + 3 + 2
    with pytest.raises(FileNotFoundError, match=r"common-random-buckets/P19/bucket3\.test\.json"):
        load_bucket_questions(dataset, SETS, RELATIONS, N_BUCKETS + 1)
    with pytest.raises(FileNotFoundError, match=r"nq-seen-buckets/P40/bucket0\.test\.json"):
        load_bucket_questions(dataset, ["train-ent"], ["P40"], N_BUCKETS)


def test_bucket_axis_labels_follow_the_numbering():
    labels, xlabel = bucket_axis_label("descending", 3)
    assert labels == ["0\nfrequent", "1", "2\nrare"] and "frequent -> rare" in xlabel
    labels, xlabel = bucket_axis_label("ascending", 3)
    assert labels == ["0\nrare", "1", "2\nfrequent"] and "rare -> frequent" in xlabel
