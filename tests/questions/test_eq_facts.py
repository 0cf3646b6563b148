"""Fact collection from T-REx: objects merged per (relation, subject), answers, fallbacks."""

from __future__ import annotations

from eq_world import _doc

from tasks.io.entity_labels import EntityLabel
from tasks.io.trex_write import write_trex_documents
from tasks.questions.facts import collect_facts, read_facts_table, write_facts_table

LABELS = {"Q1": EntityLabel("Q1", "Ada Byron", ("Ada Lovelace",)),
          "Q7": EntityLabel("Q7", "London", ("City of London", "London"))}


def _world(tmp_path):
    docs = [
        _doc("Q1", "Ada", [("Ada was born in London.", [("P19", "Q7", "London", "Ada")]),
                           ("Ada was born in Marylebone.", [("P19", "Q8", "Marylebone", "Ada")])]),
        _doc("Q1", "Ada", [("Ada was born in London.", [("P19", "Q7", "London", "Ada")]),
                           ("Ada died in London.", [("P20", "Q7", "London", "Ada")])]),
        _doc("Q2", "Bob", [("Bob was born in Leeds.", [("P19", "Q9", "Leeds", "Bob")])]),
    ]
    return [write_trex_documents(tmp_path / "re-nlg_0-3.json", docs)]


def test_objects_merge_answers_and_fallbacks(tmp_path):
    collection = collect_facts(_world(tmp_path), LABELS, ["P19", "P20", "P26"])
    p19 = {f.subject_id: f for f in collection.by_relation["P19"]}
    assert p19["Q1"].object_ids == ("Q7", "Q8")
    assert p19["Q1"].answers == ("London", "City of London", "Marylebone")  # Q8: surface form
    assert p19["Q1"].subject_label == "Ada Byron"
    assert p19["Q2"].subject_label == "Bob" and p19["Q2"].answers == ("Leeds",)
    assert collection.duplicates == 1 and collection.triples_seen == 5
    assert collection.label_fallbacks == 3  # Q8, Q2 and Q9
    assert collection.by_relation["P26"] == []
    assert collection.triples_per_relation == {"P19": 4, "P20": 1, "P26": 0}
    labels_only = collect_facts(_world(tmp_path), LABELS, ["P19"], answer_aliases=False)
    assert labels_only.by_relation["P19"][0].answers == ("London", "Marylebone")


def test_facts_table_round_trip(tmp_path):
    collection = collect_facts(_world(tmp_path), LABELS, ["P19", "P20"])
    write_facts_table(tmp_path / "facts.parquet", collection)
    by_relation, stats = read_facts_table(tmp_path / "facts.parquet")
    assert by_relation == collection.by_relation
    assert stats["triples_seen"] == 5 and stats["relations"] == ["P19", "P20"]


def test_remembered_facts_tables_read_an_unchanged_file_once(tmp_path, monkeypatch):
    from tasks.questions import facts

    collection = collect_facts(_world(tmp_path), LABELS, ["P19", "P20"])
    path = tmp_path / "facts.parquet"
    write_facts_table(path, collection)
    reads = []
    real = facts._read_facts_table
    monkeypatch.setattr(facts, "_read_facts_table", lambda p: reads.append(p) or real(p))
    read_facts_table(path)
    read_facts_table(path)
    assert len(reads) == 2  # outside the block: from disk each time
    with facts.remembered_facts_tables():
        first, stats = read_facts_table(path)
        first["P19"].clear()
        stats["relations"].append("P99")
        again, stats_again = read_facts_table(path)
        assert len(reads) == 3
        assert again == collection.by_relation  # the caller's changes stay the caller's
        assert stats_again["relations"] == ["P19", "P20"]
        only_p19 = collect_facts(_world(tmp_path), LABELS, ["P19"])
        write_facts_table(path, only_p19)  # written again: read again
        assert read_facts_table(path)[0] == only_p19.by_relation and len(reads) == 4
    read_facts_table(path)
    assert len(reads) == 5 and facts._REMEMBERED is None  # forgotten after the block
