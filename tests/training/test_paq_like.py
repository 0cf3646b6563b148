"""PAQ-like generator: one question per sampled passage that states a fact about its title
entity, the passage as positive, valid DPR JSON; counted skips; clear errors on bad input."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from tasks.io.dpr import iter_dpr_examples
from tasks.io.passages import Passage, write_passages
from tasks.io.tables import write_table
from tasks.questions.facts import FACTS_SCHEMA
from tasks.questions.templates import render_question
from tasks.training.paq_like import generate_paq_like, sample_rows

PASSAGES = [
    Passage("1", "Ada Brook was born in Lyon and studied law.", "Ada Brook"),
    Passage("2", "Cyd Marr is a painter. Marr lives in a small town.", "Cyd Marr"),
    Passage("3", "The river floods every spring.", "Vell River"),
    Passage("4", "Bo Tan was born in Oslo in 1901.", "Bo Tan"),
    Passage("5", "Eli Ross died in Rome; Ross was born in Paris.", "Eli Ross"),
]
FACTS = [  # relation, subject id, label, object ids, answers
    ("P19", "Q1", "Ada Brook", ["Q10"], ["Lyon"]),
    ("P106", "Q2", "Cyd Marr", ["Q11"], ["painter", "artist"]),
    ("P19", "Q2", "Cyd Marr", ["Q12"], ["Madrid"]),  # not stated in the passage
    ("P19", "Q4", "Bo Tan", ["Q13"], ["Oslo"]),      # a test-split fact: excluded
    ("P20", "Q5", "Eli Ross", ["Q14"], ["Rome"]),
    ("P19", "Q5", "Eli Ross", ["Q15"], ["Paris"]),
]


def _facts(path: Path, rows=FACTS) -> Path:
    columns = list(zip(*rows, strict=True))
    write_table(path, pa.table({name: list(col) for name, col in zip(
        ["relation", "subject_id", "subject_label", "object_ids", "answers"], columns,
        strict=True)}, schema=FACTS_SCHEMA))
    return path


def _splits(path: Path) -> Path:
    write_table(path, pa.table({"relation": ["P19", "P19"], "subject_id": ["Q4", "Q1"],
                                "split": ["test", "train"]}))
    return path


@pytest.fixture
def inputs(tmp_path):
    passages = tmp_path / "psgs_w100.tsv"
    write_passages(passages, PASSAGES)
    return passages, _facts(tmp_path / "facts.parquet"), _splits(tmp_path / "splits.parquet")


def test_one_question_per_sampled_passage_with_the_passage_as_positive(inputs, tmp_path):
    passages, facts, splits = inputs
    out = tmp_path / "paq.json"
    stats = generate_paq_like(passages, facts, out, n_passages=5, seed=3, splits_table=splits)
    examples = list(iter_dpr_examples(out))  # the DPR reader validates the format
    by_passage = {e.positive_ctxs[0].passage_id: e for e in examples}
    assert len(by_passage) == len(examples) == stats["questions"] == 3  # one per passage
    assert set(by_passage) == {"1", "2", "5"}
    assert all(len(e.positive_ctxs) == 1 and not e.hard_negative_ctxs for e in examples)
    texts = {p.id: p for p in PASSAGES}
    for pid, example in by_passage.items():
        ctx = example.positive_ctxs[0]
        assert (ctx.title, ctx.text) == (texts[pid].title, texts[pid].text)
    assert by_passage["1"].question == render_question("P19", "Ada Brook")
    assert by_passage["1"].answers == ("Lyon",)
    # Cyd Marr: only the stated fact (P106) can be asked
    assert by_passage["2"].question == render_question("P106", "Cyd Marr")
    assert by_passage["5"].question in {render_question("P20", "Eli Ross"),
                                        render_question("P19", "Eli Ross")}
    skipped = stats["skipped"]
    assert skipped["facts of excluded splits"] == 1  # Bo Tan's test fact
    assert skipped["passages without a fact about their title entity"] == 2  # river, Bo Tan
    assert stats["sampled"] == 5 == stats["questions"] + 2
    assert sum(stats["relations"].values()) == 3


def test_sample_is_seeded_and_bounded(inputs, tmp_path):
    passages, facts, splits = inputs
    a = generate_paq_like(passages, facts, tmp_path / "a.json", 2, seed=1, splits_table=splits)
    b = generate_paq_like(passages, facts, tmp_path / "b.json", 2, seed=1, splits_table=splits)
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert a == b and a["sampled"] == 2
    assert sample_rows(5, 10, 0) == [0, 1, 2, 3, 4]
    assert sample_rows(100, 7, 4) != sample_rows(100, 7, 5)


def test_without_exclusion_the_test_fact_is_asked(inputs, tmp_path):
    passages, facts, _ = inputs
    stats = generate_paq_like(passages, facts, tmp_path / "p.json", 5, seed=3)
    pids = {e.positive_ctxs[0].passage_id for e in iter_dpr_examples(tmp_path / "p.json")}
    assert "4" in pids and stats["questions"] == 4


def test_bad_inputs_are_clear_errors(inputs, tmp_path):
    passages, facts, splits = inputs
    out = tmp_path / "out.json"
    with pytest.raises(FileNotFoundError, match="no passage file"):
        generate_paq_like(tmp_path / "missing.tsv", facts, out, 5)
    with pytest.raises(FileNotFoundError, match="facts table"):
        generate_paq_like(passages, tmp_path / "missing.parquet", out, 5)
    bad = tmp_path / "bad.parquet"
    write_table(bad, pa.table({"relation": ["P19"], "subject_id": ["Q1"]}))
    with pytest.raises(ValueError, match=r"bad.parquet: facts table lacks column\(s\) "
                                         r"\['subject_label', 'answers'\]"):
        generate_paq_like(passages, bad, out, 5)
    with pytest.raises(ValueError, match="n_passages must be >= 1"):
        generate_paq_like(passages, facts, out, 0)
    unstated = _facts(tmp_path / "unstated.parquet",
                      [("P19", "Q1", "Ada Brook", ["Q9"], ["Tokyo"])])
    with pytest.raises(ValueError, match="no question generated from 5 sampled passages"):
        generate_paq_like(passages, unstated, out, 5)
    assert not out.exists()


def test_a_subject_label_without_a_word_is_counted(inputs, tmp_path):
    """A fact whose subject label normalises to no token (punctuation only) can match no
    passage title: it is left out and counted, not dropped silently."""
    from tasks.training.paq_like import load_title_facts

    facts = _facts(tmp_path / "odd.parquet", [*FACTS, ("P19", "Q9", "?!", ["Q16"], ["Lyon"])])
    by_subject, counts = load_title_facts(facts)
    assert counts["facts whose subject label has no word"] == 1
    assert sum(len(v) for v in by_subject.values()) + sum(counts.values()) == len(FACTS) + 1
