"""Original vs paraphrased questions: the collection of contexts and the evaluation."""

from __future__ import annotations

import json

import pytest

from tasks.io.passages import iter_passages
from tasks.io.squad import read_squad
from tasks.io.trec import write_trec_run
from tasks.retrieval.paraphrased import (
    discover_paraphrase_sets,
    evaluate_paraphrased,
    evaluate_paraphrased_runs,
    load_pairs,
    paraphrase_collection,
    paraphrased_questions,
    qid,
    queries,
)
from tasks.retrieval.query_sets import paraphrased_query_set, write_query_set

CONTEXTS = [
    ("Paris", "Paris is the capital of France and its largest city."),
    ("Tokyo", "Tokyo hosted the Summer Olympics in 1964 and in 2021."),
    ("Nile", "The Nile flows north into the Mediterranean Sea."),
]
# (context index, orig question, paraphrase without the overlapping word, answer)
QUESTIONS = [
    (0, "What is the capital of France?", "Which city governs the French state?", "Paris"),
    (1, "When did Tokyo host the Olympics?", "When were the games held in Japan?", "1964"),
    (2, "Where does the Nile flow?", "Into which sea does Egypt's river empty?", "Mediterranean"),
    (0, "What is the largest city of France?", "What is the biggest French town?", "Paris"),
]


def _squad(variant: int, ids_offset: int) -> dict:
    data = []
    for c, (title, context) in enumerate(CONTEXTS):
        qas = [{"id": str(100 + i - ids_offset), "question": q[1 + variant],
                "answers": [{"text": q[3], "answer_start": max(0, context.find(q[3]))}]}
               for i, q in enumerate(QUESTIONS) if q[0] == c]
        data.append({"title": title, "paragraphs": [{"context": context, "qas": qas}]})
    return {"version": "1.1", "data": data}


@pytest.fixture
def sets_dir(tmp_path):
    root = tmp_path / "paraphrasing-squad"
    root.mkdir()
    for name in ("dev", "adv"):
        (root / f"{name}_orig.json").write_text(json.dumps(_squad(0, 0)))
        (root / f"{name}_para.json").write_text(json.dumps(_squad(1, 1)))  # ids: orig - 1
    (root / "lonely_orig.json").write_text(json.dumps(_squad(0, 0)))  # no para file
    return root


def test_discover_and_collection(sets_dir, tmp_path):
    sets = discover_paraphrase_sets(sets_dir)
    assert list(sets) == ["adv", "dev"]
    assert discover_paraphrase_sets(tmp_path / "missing") == {}
    tsv = paraphrase_collection(sets, tmp_path / "out" / "passages.tsv")
    passages = list(iter_passages(tsv))
    assert [(p.id, p.title, p.text) for p in passages] == [
        (str(i), title, text) for i, (title, text) in enumerate(CONTEXTS, start=1)]
    qids, texts = queries(sets)
    assert len(qids) == 16 and qids[0] == qid("adv", "orig", 0) == "adv:orig:000000"
    assert texts[4] == "Which city governs the French state?"  # adv:para:000000


def test_evaluation_exact_metrics(sets_dir):
    pairs = {"dev": load_pairs(discover_paraphrase_sets(sets_dir))["dev"]}
    orig, para = pairs["dev"]
    assert [q.question for q in orig] == [
        QUESTIONS[0][1], QUESTIONS[3][1], QUESTIONS[1][1], QUESTIONS[2][1]]  # file order
    passages = {str(i): ctx for i, ctx in enumerate(CONTEXTS, start=1)}
    # gold passage per position: 1 (Paris), 1 (Paris), 2 (Tokyo), 3 (Nile)
    gold = ["1", "1", "2", "3"]
    wrong = {"1": "2", "2": "3", "3": "1"}
    # lexical: every orig at rank 0; para: position 0 at rank 1, 1 and 3 missed, 2 at rank 0
    lexical = {}
    for i, g in enumerate(gold):
        lexical[qid("dev", "orig", i)] = [(g, 3.0), (wrong[g], 1.0)]
    lexical[qid("dev", "para", 0)] = [("2", 2.0), ("1", 1.0)]
    lexical[qid("dev", "para", 1)] = [("2", 2.0), ("3", 1.0)]
    lexical[qid("dev", "para", 2)] = [("2", 2.0)]
    lexical[qid("dev", "para", 3)] = [("1", 2.0)]
    # semantic: the same for orig and para (rank 0), except orig position 3 missed
    semantic = {qid("dev", v, i): [(g, 1.0)] for v in ("orig", "para") for i, g in
                enumerate(gold)}
    semantic[qid("dev", "orig", 3)] = [("1", 1.0)]
    metrics = evaluate_paraphrased({"bm25": lexical, "dense": semantic},
                                   paraphrased_query_set(pairs), passages, [1, 2], k=1,
                                   n_bootstrap=200)
    assert metrics["ks"] == [1, 2]
    dev = metrics["sets"]["dev"]
    assert dev["questions"] == 4 and dev["most_hurt"] == "bm25"
    bm25, dense = dev["retrievers"]["bm25"], dev["retrievers"]["dense"]
    assert bm25["orig"] == {"top1": 100.0, "top2": 100.0}
    assert bm25["para"] == {"top1": 25.0, "top2": 50.0}
    assert (bm25["difference"], bm25["lost"], bm25["gained"]) == (75.0, 3, 0)
    assert bm25["ci_low"] <= 75.0 <= bm25["ci_high"] <= 100.0 and bm25["significant"]
    assert dense["orig"] == {"top1": 75.0, "top2": 75.0}
    assert dense["para"] == {"top1": 100.0, "top2": 100.0}
    assert (dense["difference"], dense["lost"], dense["gained"]) == (-25.0, 0, 1)
    assert dense["ci_low"] <= -25.0 <= dense["ci_high"] <= 0.0


def test_evaluate_runs_writes_outputs(sets_dir, tmp_path):
    sets = discover_paraphrase_sets(sets_dir)
    tsv = paraphrase_collection(sets, tmp_path / "passages.tsv")
    qids, _ = queries(sets)
    run = {q: [("1", 2.0), ("2", 1.0), ("3", 0.5)] for q in qids}
    write_trec_run(tmp_path / "bm25.trec", run, tag="t")
    query_file = write_query_set(paraphrased_questions(sets), tmp_path / "queries.json")
    metrics = evaluate_paraphrased_runs({"bm25": tmp_path / "bm25.trec"}, query_file, tsv,
                                        tmp_path / "m.json", tmp_path / "r.md", [1, 3], k=3,
                                        n_bootstrap=50)
    assert metrics["collection_passages"] == 3
    assert json.loads((tmp_path / "m.json").read_text())["sets"]["adv"]["retrievers"]["bm25"][
        "difference"] == 0.0
    assert metrics["sets"]["dev"]["retrievers"]["bm25"]["orig"] == {"top1": 50.0, "top3": 100.0}
    report = (tmp_path / "r.md").read_text()
    assert "| dev | bm25 | 4 |" in report and "orig - para" in report


def test_released_sets_collection(shared_data, tmp_path):
    sets = discover_paraphrase_sets(shared_data / "paraphrasing-squad")
    if not sets:
        pytest.skip("no released paraphrased sets in ../shared/data/paraphrasing-squad")
    contexts = {q.context for orig, _ in sets.values() for q in read_squad(orig).questions()}
    tsv = paraphrase_collection(sets, tmp_path / "passages.tsv")
    passages = list(iter_passages(tsv))
    assert len(passages) == len(contexts)
    assert [p.id for p in passages] == [str(i) for i in range(1, len(contexts) + 1)]
    assert {p.text for p in passages} == contexts
    assert all(len(o) == len(p) for o, p in load_pairs(sets).values())


def test_no_retriever_is_most_hurt_when_nothing_is_lost(sets_dir):
    pairs = {"dev": load_pairs(discover_paraphrase_sets(sets_dir))["dev"]}
    passages = {str(i): ctx for i, ctx in enumerate(CONTEXTS, start=1)}
    gold = ["1", "1", "2", "3"]
    same = {qid("dev", v, i): [(g, 1.0)] for v in ("orig", "para") for i, g in enumerate(gold)}
    metrics = evaluate_paraphrased({"bm25": same, "dense": same}, paraphrased_query_set(pairs),
                                   passages, [1], k=1, n_bootstrap=50)
    assert metrics["sets"]["dev"]["most_hurt"] is None
