"""The adversarial branch's wiring: Flair-like taggers -> suggestions table -> generation.

The taggers are stubs (the Flair taggers themselves are tested in ``tests/models``); what is
checked here is the interface between ``tasks.paraphrase.adversarial`` and the flow's steps.
"""

from __future__ import annotations

import json

import pytest
from para_data_world import stub_taggers

from tasks.io.tables import read_table
from tasks.paraphrase.flow_tasks import suggest_adversarial
from tasks.paraphrase.generation import PPDBSubstitution, generate_candidates
from tasks.paraphrase.ppdb_lookup import PPDBTable, build_ppdb_table


@pytest.fixture(scope="module")
def adversarial(mini_params, tmp_path_factory):
    out = tmp_path_factory.mktemp("adv") / "adversarial.parquet"
    counts = suggest_adversarial(mini_params.raw_path("squad_dev"), "ner", "chunk", out,
                                 taggers=stub_taggers())
    return out, counts


def test_suggestions_table_from_the_taggers(adversarial):
    out, counts = adversarial
    rows = read_table(out).to_pylist()
    q1 = [(r["rank"], r["phrase"], r["suggestion"]) for r in rows if r["qid"] == "q1"]
    # Paris (GPE): the other sentence's Berlin and France (GPE) make both sentences
    # distractors; "the capital city" is already in the question, so only one phrase is left.
    assert q1 == [(1, "NP", "its largest city")]
    assert counts["questions"] == 7 and counts["questions_with_suggestions"] == 1
    assert counts["phrases_found"] == 2 and counts["suggestions"] == 1
    assert counts["questions_without_answer"] == 0
    assert sum(counts["no_phrase_because"].values()) == 6
    assert all(r["suggestion"] is None and r["rank"] == 0 for r in rows if r["qid"] != "q1")


def test_a_question_without_answer_is_counted_not_dropped(mini_params, tmp_path):
    data = json.loads(mini_params.raw_path("squad_dev").read_text())
    qas = data["data"][0]["paragraphs"][0]["qas"]
    qas.append({"id": "unanswerable", "question": "who painted the city?", "answers": []})
    squad = tmp_path / "dev.json"
    squad.write_text(json.dumps(data))
    counts = suggest_adversarial(squad, "ner", "chunk", tmp_path / "adv.parquet",
                                 taggers=stub_taggers())
    assert counts["questions_without_answer"] == 1 and counts["questions"] == 7
    assert "unanswerable" not in {r["qid"] for r in read_table(tmp_path / "adv.parquet")
                                  .to_pylist()}


def test_adversarial_table_feeds_the_generation_step(mini_params, adversarial, tmp_path):
    out, _ = adversarial
    build_ppdb_table(mini_params.raw_path("ppdb"), tmp_path / "ppdb.sqlite")

    class Echo(PPDBSubstitution):
        def generate(self, inputs, beam_size=None):
            return [f"{q[:-1]} near {s}?" if s else q for s, q in inputs]

    with PPDBTable(tmp_path / "ppdb.sqlite") as table:
        counts = generate_candidates(out, tmp_path / "c.parquet", Echo(table),
                                     without_suggestion=False)
    assert counts["inputs"] == 1 and counts["candidates"] == 1
    row = read_table(tmp_path / "c.parquet").to_pylist()[0]
    assert row["paraphrase"] == "what is the capital city of france near its largest city?"
