"""Specialised question encoders over one passage index (Table 4), on a tiny world: the index
is built once and opened once for every question encoder, the passage encoder stays
bit-identical under onlyQ fine-tuning, per-relation rows + macro, index memory from the file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tasks.io.entityquestions import EQQuestion
from tasks.io.passages import Passage, write_passages
from tasks.retrieval.faiss_index import INDEX_FILE
from tasks.retrieval.query_sets import QuerySet

N = 24


@pytest.fixture(scope="module")
def world(tmp_path_factory, tiny_bert, tiny_config, tiny_train_json):
    """A trained pair, its passage index, two relations with train files, one without."""
    from tasks.retrieval.dense_encoding import (
        build_dense_index,
        encode_passage_shard,
        shard_files,
    )
    from tasks.training.retriever import encoder_spec, train_dpr

    root = tmp_path_factory.mktemp("specialised")
    examples = json.loads(tiny_train_json.read_text())
    assert len(examples) == N
    (root / "all.json").write_text(json.dumps(examples))
    pair = root / "pair"
    train_dpr([root / "all.json"], [], tiny_bert, pair, root / "ck-pair",
              tiny_config(max_steps=6))
    passages = root / "psgs.tsv"
    write_passages(passages, [Passage(c["passage_id"], c["text"], c["title"])
                              for e in examples for c in e["positive_ctxs"]])
    spec = encoder_spec(pair, name="base")
    shard = encode_passage_shard(passages, 0, N, shard_files(root / "shards", 0), spec,
                                 batch_size=8, device="cpu")
    index_dir = build_dense_index([shard], root / "index", spec)
    dpr_dir = root / "dpr"
    (dpr_dir / "train").mkdir(parents=True)
    halves = {"P1": examples[:12], "P2": examples[12:]}
    tuned = {}
    for relation, items in halves.items():
        (dpr_dir / "train" / f"{relation}.train.json").write_text(json.dumps(items))
        out = root / "tuned" / relation
        train_dpr([dpr_dir / "train" / f"{relation}.train.json"], [], pair, out,
                  root / f"ck-{relation}", tiny_config(max_steps=4, freeze="onlyQ"))
        tuned[relation] = encoder_spec(out, name=f"base-{relation.lower()}")
    test = QuerySet("test", {
        relation: [EQQuestion(e["question"], tuple(e["answers"])) for e in items]
        for relation, items in {**halves, "P3": examples[:4]}.items()})
    return {"root": root, "pair": pair, "passages": passages, "spec": spec,
            "index": index_dir, "dpr_dir": dpr_dir, "tuned": tuned, "test": test,
            "examples": examples}


def test_onlyq_keeps_the_passage_encoder_bit_identical(world):
    from tasks.training.specialised import check_passage_encoder_identical, encoder_tensors

    pair, tuned = world["pair"], Path(world["tuned"]["P1"].question_model).parent
    assert check_passage_encoder_identical(pair / "ctx_encoder", tuned / "ctx_encoder") > 0
    before = encoder_tensors(pair / "question_encoder")
    after = encoder_tensors(tuned / "question_encoder")
    assert any(not np.array_equal(before[k], after[k]) for k in before)  # Q was trained


def test_full_training_changes_the_passage_encoder_and_is_refused(world, tiny_config):
    from tasks.training.retriever import train_dpr
    from tasks.training.specialised import check_passage_encoder_identical

    root = world["root"]
    out = root / "full-from-pair"
    train_dpr([world["dpr_dir"] / "train" / "P1.train.json"], [], world["pair"], out,
              root / "ck-full", tiny_config(max_steps=2))
    with pytest.raises(ValueError, match="passage encoder tensor .* differs"):
        check_passage_encoder_identical(world["pair"] / "ctx_encoder", out / "ctx_encoder")


def test_one_index_opened_once_and_searched_by_every_question_encoder(world, monkeypatch):
    import tasks.training.specialised as specialised

    opened = []
    original = specialised.DenseIndex.open

    def counting_open(path):
        opened.append(Path(path))
        return original(path)

    monkeypatch.setattr(specialised.DenseIndex, "open", counting_open)
    index_file = world["index"] / INDEX_FILE
    stamp = index_file.stat().st_mtime_ns
    index = specialised.SharedPassageIndex(world["index"], world["spec"])
    faiss_object = index.index.index
    result = specialised.evaluate_question_encoders(
        index, world["tuned"], world["test"], world["passages"], ks=[1, 5, 20], k=20)
    assert opened == [world["index"]]
    assert index.index.index is faiss_object and index_file.stat().st_mtime_ns == stamp
    assert result["searches"] == ["base", "base-p1", "base-p2"]


def test_per_relation_rows_and_macro(world):
    from tasks.training.specialised import SharedPassageIndex, evaluate_question_encoders

    index = SharedPassageIndex(world["index"], world["spec"])
    result = evaluate_question_encoders(index, world["tuned"], world["test"],
                                        world["passages"], ks=[1, 5], k=5)
    rows = result["per_relation"]
    assert list(rows) == ["P1", "P2"] and set(result["shared_all"]) == {"P1", "P2", "P3"}
    for row in rows.values():
        for side in ("shared", "specialised"):
            assert set(row[side]) == {"top1", "top5"}
            assert 0.0 <= row[side]["top1"] <= row[side]["top5"] <= 100.0
        assert row["difference"] == pytest.approx(row["specialised"]["top5"]
                                                  - row["shared"]["top5"])
    for side in ("shared", "specialised"):
        expected = sum(r[side]["top5"] for r in rows.values()) / 2
        assert result["macro"][side]["top5"] == pytest.approx(expected, abs=0.01)
    every = [r["top5"] for r in result["shared_all"].values()]
    assert result["shared_macro_all"]["top5"] == pytest.approx(sum(every) / 3, abs=0.01)


def test_shared_rows_equal_the_standard_dense_retrieval(world):
    """The shared encoder through the shared index scores as the retrieval core does."""
    from tasks.retrieval.core import evaluate
    from tasks.retrieval.encoders import encode_questions
    from tasks.retrieval.evaluate import passages_by_id
    from tasks.retrieval.faiss_index import dense_search
    from tasks.training.specialised import SharedPassageIndex, evaluate_question_encoders

    test = world["test"]
    embeddings = encode_questions(world["spec"], test.texts, test.qids, device="cpu")
    run = dense_search(world["index"], embeddings, 5)
    passages = passages_by_id(world["passages"], {p for h in run.values() for p, _ in h})
    standard = {g: {"top5": round(100 * e.accuracy[5], 2)}
                for g, e in evaluate(run, test, passages, [5]).items()}
    index = SharedPassageIndex(world["index"], world["spec"])
    ours = evaluate_question_encoders(index, {}, test, world["passages"], ks=[5], k=5)
    assert ours["shared_all"] == standard and ours["per_relation"] == {}
    assert ours["macro"]["specialised"] == {"top5": None}


def test_a_question_encoder_of_another_space_is_refused(world):
    from tasks.training.retriever import encoder_spec
    from tasks.training.specialised import SharedPassageIndex

    index = SharedPassageIndex(world["index"], world["spec"])
    tuned_dir = Path(world["tuned"]["P1"].question_model).parent
    longer = encoder_spec(tuned_dir, max_length=16, name="short")
    with pytest.raises(ValueError, match="max_length 16 differs"):
        index.check_question_encoder(longer)


def test_index_memory_is_the_faiss_file_size(world):
    import faiss

    from tasks.training.specialised import index_memory

    memory = index_memory(world["index"], 24)
    size = (world["index"] / INDEX_FILE).stat().st_size
    index = faiss.read_index(str(world["index"] / INDEX_FILE))
    assert memory["one_index_bytes"] == size >= index.ntotal * index.d * 4
    assert memory["one_index_per_relation_bytes"] == 24 * size
    assert memory["saved_bytes"] == 23 * size
    assert index_memory(world["index"], 0)["saved_bytes"] == 0


def test_relations_without_training_questions_are_planned_as_not_run(world, tmp_path):
    from tasks.training.specialised import NO_TEST, NO_TRAIN, READY, plan_relations

    empty = world["dpr_dir"] / "train" / "P4.train.json"
    empty.write_text("[]")
    test = QuerySet("test", {**world["test"].groups})
    plans = {p.relation: p for p in plan_relations(["P1", "P3", "P4", "P5", "P1"],
                                                   world["dpr_dir"], test)}
    assert list(plans) == ["P1", "P3", "P4", "P5"]
    assert plans["P1"].status == READY and plans["P1"].train_questions == 12
    assert plans["P3"].status == NO_TRAIN and plans["P3"].train_file is None
    assert plans["P4"].status == NO_TRAIN
    assert plans["P5"].status == NO_TRAIN
    (world["dpr_dir"] / "train" / "P5.train.json").write_text(
        json.dumps(world["examples"][:2]))
    assert plan_relations(["P5"], world["dpr_dir"], test)[0].status == NO_TEST
    with pytest.raises(ValueError, match="relation list is empty"):
        plan_relations([], world["dpr_dir"], test)


def test_a_saved_pair_starts_each_side_from_its_own_encoder(world):
    """Fine-tuning from a trained pair starts the question side from its question encoder
    and the passage side from its passage encoder (not both from one checkpoint)."""
    from models.retriever.network import BiEncoder, is_saved_pair
    from tasks.training.specialised import encoder_tensors

    pair = world["pair"]
    assert is_saved_pair(pair) and not is_saved_pair(pair / "question_encoder")
    model = BiEncoder.from_pretrained(pair, freeze="onlyQ")
    for side, module in (("question_encoder", model.question_model),
                         ("ctx_encoder", model.ctx_model)):
        saved = encoder_tensors(pair / side)
        prefix = f"{side}.bert_model."
        state = module.state_dict()
        assert {k.removeprefix(prefix) for k in saved} >= set(state)
        for name, tensor in state.items():
            assert np.array_equal(tensor.numpy(), saved[prefix + name]), (side, name)
    q = model.question_model.state_dict()
    c = model.ctx_model.state_dict()
    assert any(not np.array_equal(q[k].numpy(), c[k].numpy()) for k in q)  # trained apart
    with pytest.raises(ValueError, match="cannot start a shared encoder"):
        BiEncoder.from_pretrained(pair, shared=True)
