"""judge_run: first hit over the whole ranking, flags of the first result_ctxs passages, the
string-mode screen, worker processes, errors."""

import random
import sys
import unicodedata

import pytest

from tasks.evaluation.has_answer import MODES, has_answer_matrix, passage_has_answer
from tasks.evaluation.judge import Judgement, first_hits, judge_rows, judge_run
from tasks.evaluation.string_judge import SCREEN_BREAKERS
from tasks.evaluation.tokenizer import words
from tasks.evaluation.topk import first_hit_ranks, topk_accuracy

PASSAGES = {
    "p1": ("Paris", "Paris is the capital of France."),
    "p2": ("Yorkshire", "Yorkshire is a county in England."),
    "p3": ("New York City", "The U.S. city of New York."),
    "p4": ("Greece", "Η ΟΔΟΣ in Athens; the capital of Greece."),
    "p5": ("Lyon", "Lyon is in France."),
}


def test_judge_run_first_hit_and_capped_flags():
    ranked = {"q1": ["p2", "p3", "p1", "p5"], "q2": ["p1", "p2"], "q3": ["p2", "p2", "p2"]}
    answers = {"q1": ["France"], "q2": ["Paris", "York"], "q3": ["nowhere"]}
    judged = judge_run(ranked, answers, PASSAGES, "eq-string", result_ctxs=2)
    assert list(judged) == ["q1", "q2", "q3"]
    # q1: no hit in the first 2 written passages; its first hit (rank 2) is still found.
    assert judged["q1"] == Judgement(2, (False, False))
    assert judged["q2"] == Judgement(0, (True, False))
    assert judged["q3"] == Judgement(None, (False, False))
    assert first_hits(judged) == [2, 0, None]
    assert topk_accuracy(first_hits(judged), [1, 3, 100]) == {1: 1 / 3, 3: 2 / 3, 100: 2 / 3}
    full = judge_run(ranked, answers, PASSAGES, "eq-string")
    assert full["q1"] == Judgement(2, (False, False, True, True))
    assert judge_run(ranked, answers, PASSAGES, result_ctxs=0)["q1"] == Judgement(2, ())


def test_ranks_beyond_result_ctxs_are_only_judged_without_an_earlier_hit():
    class CountingStore(dict):
        calls: list

        def __getitem__(self, key):
            self.calls.append(key)
            return super().__getitem__(key)

    store = CountingStore(PASSAGES)
    store.calls = []
    judge_run({"q": ["p1", "p2", "p3"]}, {"q": ["Paris"]}, store, result_ctxs=1)
    assert store.calls == ["p1"]
    store.calls = []
    judge_run({"q": ["p2", "p3", "p1"], "r": ["p3"]}, {"q": ["Paris"], "r": ["x"]}, store,
              result_ctxs=1)
    assert sorted(store.calls) == ["p1", "p2", "p3", "p3"]  # phase 1: p2, p3; phase 2: p3, p1


def test_beyond_result_ctxs_waves_of_doubling_depth_stop_after_the_first_hit():
    fetched = []

    class Store(dict):
        def __getitem__(self, key):
            fetched.append(key)
            return super().__getitem__(key)

    store = Store({i: ("t", "the answer" if i == 12 else "nothing") for i in range(60)})
    judged = judge_run({"q": list(range(60))}, {"q": ["answer"]}, store, result_ctxs=1)
    assert judged["q"] == Judgement(12, (False,))
    assert fetched == list(range(31))  # rank 0; wave 1: ranks 1-10; wave 2: ranks 11-30
    fetched.clear()
    assert judge_run({"q": list(range(60))}, {"q": ["absent"]}, store, result_ctxs=1)["q"] \
        == Judgement(None, (False,))
    assert fetched == list(range(60))


def test_sigma_passages_skip_the_screen_and_still_match():
    # "ΟΔΟΣ" lower-cases to "οδος" (final sigma) token by token; the whole-text lower-case
    # agrees here, but a passage with a capital sigma is always tokenised.
    answers = {"q": ["οδος"], "r": ["ΟΔΟΣ"], "s": ["οδοσ"]}
    judged = judge_run({q: ["p4"] for q in answers}, answers, PASSAGES, "dpr-string")
    assert [j.first_hit for j in judged.values()] == [0, 0, None]


def test_errors():
    with pytest.raises(KeyError, match="no answers"):
        judge_run({"q": ["p1"]}, {}, PASSAGES)
    with pytest.raises(KeyError, match="'missing'"):
        judge_run({"q": ["missing"]}, {"q": ["x"]}, PASSAGES)
    with pytest.raises(ValueError, match="result_ctxs"):
        judge_run({"q": ["p1"]}, {"q": ["x"]}, PASSAGES, result_ctxs=-1)
    with pytest.raises(ValueError, match="workers"):
        judge_run({"q": ["p1"]}, {"q": ["x"]}, PASSAGES, workers=0)
    with pytest.raises(ValueError, match="valid modes: eq-string"):
        judge_run({"q": ["p1"]}, {"q": ["x"]}, PASSAGES, "string")
    assert judge_run({}, {}, PASSAGES) == {}


def _random_run(seed, n_questions=300, n_passages=120):
    rng = random.Random(seed)
    words = ["Paris", "York", "new", "U.S.", "Z\u00fcrich", "Zu\u0308rich", "a", ",", "1990",
             "ΑΣ", "the", "north", "İstanbul", "e\u0301", "\u00e9", "Cr\u00e9teil", "\u212aelvin",
             "kelvin", "a\u037e", "a;", "\u1fefx", "`x", "ΆΘΗΝΑ", "Α\u0301θηνα", "北京"]
    passages = {i: (" ".join(rng.choices(words, k=2)), " ".join(rng.choices(words, k=12)))
                for i in range(n_passages)}
    ranked = {q: rng.choices(range(n_passages), k=rng.randint(0, 30)) for q in range(n_questions)}
    answers = {q: [" ".join(rng.choices(words, k=rng.randint(1, 3)))
                   for _ in range(rng.randint(0, 3))] for q in ranked}
    return ranked, answers, passages


@pytest.mark.parametrize("mode", MODES)
def test_judge_run_agrees_with_the_full_matrix_and_with_worker_processes(mode):
    ranked, answers, passages = _random_run(7)
    matrix = has_answer_matrix([answers[q] for q in ranked], list(ranked.values()), passages, mode)
    # passage_has_answer tokenises every passage (no screen); it is checked against a
    # transcription of the reference functions in test_eval_has_answer.py.
    assert matrix == [[passage_has_answer(answers[q], passages[pid][1], passages[pid][0], mode)
                       for pid in ids] for q, ids in ranked.items()]
    expected_firsts = first_hit_ranks(matrix)
    for result_ctxs in (None, 0, 3, 50):
        judged = judge_rows([answers[q] for q in ranked], list(ranked.values()), passages, mode,
                            result_ctxs, workers=1)
        assert [j.first_hit for j in judged] == expected_firsts
        assert [list(j.has_answer) for j in judged] == [row[:result_ctxs] for row in matrix]
    assert any(f is not None for f in expected_firsts)
    assert any(f is None for f in expected_firsts)
    parallel = judge_run(ranked, answers, passages, mode, 5, workers=2)
    serial = judge_run(ranked, answers, passages, mode, 5, workers=1)
    assert parallel == serial


def test_screen_breakers_are_complete_over_all_of_unicode():
    """The screen looks for an answer's ASCII runs in the raw passage; a run that ends a token
    is searched whole. Under NFD a code point breaks that when its decomposition tokenises into
    a token ending in ASCII (the raw bytes hold no such character): a letter keeps its accent
    in its token, a symbol does not (not-equal is "=" and U+0338, two tokens)."""
    lower_to_ascii, nfd_to_token_ending_in_ascii = set(), set()
    for code in range(0x80, sys.maxunicode + 1):
        char = chr(code)
        if any(ord(c) < 128 for c in char.lower()):
            lower_to_ascii.add(char)
        decomposed = unicodedata.normalize("NFD", char)
        if decomposed != char and any(ord(token[-1]) < 128 for token in words(decomposed)):
            nfd_to_token_ending_in_ascii.add(char)
    assert lower_to_ascii <= set(SCREEN_BREAKERS[False])
    assert lower_to_ascii | nfd_to_token_ending_in_ascii | {"\u03a3"} == \
        set(SCREEN_BREAKERS[True])


@pytest.mark.parametrize(("answer", "text"), [("\u2260", "\u2260"), ("=", "a \u2260 b"),
                                              ("<", "a \u226e b"), (">", "\u226f")])
def test_negated_relations_are_matched_in_the_dpr_modes(answer, text):
    """DPR's NFD splits not-equal into "=" and U+0338: the screened batch path must agree with
    the passage-by-passage judge (found by comparing with FORMATS.md's rule)."""
    passages = {"p": ("", text)}
    for mode in ("dpr-string", "eq-string"):
        expected = passage_has_answer([answer], text, "", mode)
        judged = judge_rows([[answer]], [["p"]], passages, mode, None, workers=1)
        assert list(judged[0].has_answer) == [expected], mode
    assert passage_has_answer([answer], text, "", "dpr-string")


@pytest.mark.parametrize("mode", ["eq-string", "dpr-string"])
def test_precomposed_and_decomposed_accents_pass_the_screen(mode):
    passages = {"nfc": ("", "born in Cr\u00e9teil ."), "nfd": ("", "born in Cre\u0301teil ."),
                "kelvin": ("", "\u212aelvin scale"), "greek": ("", "ΆΘΗΝΑ city")}
    answers = {"q": ["Cr\u00e9teil"], "k": ["kelvin"], "g": ["Α\u0301θηνα"]}
    ranked = {q: list(passages) for q in answers}
    judged = judge_run(ranked, answers, passages, mode)
    flags = {q: j.has_answer for q, j in judged.items()}
    dpr = mode == "dpr-string"
    assert flags["q"] == (dpr, True, False, False)
    assert flags["k"] == (False, False, True, False)  # str.lower maps the Kelvin sign to k
    assert flags["g"] == (False, False, False, dpr)
