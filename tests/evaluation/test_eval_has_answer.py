"""Answer matching (EntityQuestions / DPR has_answer), hand-derived cases per mode; the
randomized comparison with the reference functions is in test_eval_has_answer_random.py."""

import pytest

from tasks.evaluation.has_answer import (
    DEFAULT_MODE,
    MODES,
    check_mode,
    contains_token_sequence,
    has_answer_matrix,
    joined_tokens,
    normalize_answers,
    passage_has_answer,
)

NFC_ZURICH = "Z\u00fcrich"
NFD_ZURICH = "Zu\u0308rich"


STRING_MODES = ["eq-string", "dpr-string"]


def has(answers, text, title="", mode="dpr-string", **kw):
    return passage_has_answer(answers, text, title, mode, **kw)


def test_default_mode_is_entityquestions_string():
    assert DEFAULT_MODE == "eq-string"
    assert not passage_has_answer(["\u00e9"], "caf\u00e9")  # see the minimal case below


# --------------------------------------------------------------------------- string mode


def test_normalize_answers():
    assert normalize_answers(["U.S.", "New York", ""]) == [
        ["u", ".", "s", "."],
        ["new", "york"],
        [],
    ]
    assert normalize_answers([NFC_ZURICH]) == [["zu\u0308rich"]]


@pytest.mark.parametrize("smode", STRING_MODES)
def test_punctuation_in_answer(smode):
    assert has(["U.S."], "He joined the U.S. army in 1990.", mode=smode)
    assert has(["U.S."], "the U. S. army", mode=smode)  # same tokens with spaces
    assert not has(["U.S."], "the US army", mode=smode)
    assert has(["U.S"], "the U.S. army", mode=smode)  # "u . s" is a prefix run


@pytest.mark.parametrize("smode", STRING_MODES)
def test_case_is_ignored(smode):
    assert has(["PARIS"], "born in paris, France", mode=smode)
    assert has(["paris"], "BORN IN PARIS", mode=smode)


@pytest.mark.parametrize("smode", STRING_MODES)
def test_answer_at_start_and_end_and_whole_passage(smode):
    assert has(["Paris"], "Paris is a city", mode=smode)
    assert has(["a city"], "Paris is a city", mode=smode)
    assert has(["Paris is a city"], "Paris is a city", mode=smode)
    assert not has(["Paris is a city too"], "Paris is a city", mode=smode)


@pytest.mark.parametrize("smode", STRING_MODES)
def test_partial_words_do_not_match(smode):
    assert not has(["York"], "Yorkshire is a county", mode=smode)
    assert not has(["shire"], "Yorkshire is a county", mode=smode)
    assert has(["York"], "New York-based", mode=smode)  # "-" is its own token


def test_minimal_case_nfc_answer_in_nfc_passage():
    # Issue #12: answer "é" (U+00E9) in a passage holding "é" (U+00E9). EntityQuestions
    # normalises only the answer (-> "e" + U+0301), DPR normalises both sides.
    assert not has(["\u00e9"], "caf \u00e9 au lait", mode="eq-string")
    assert has(["\u00e9"], "caf \u00e9 au lait", mode="dpr-string")
    assert not has(["\u00e9"], "\u00e9", mode="eq-string-title")
    assert has(["\u00e9"], "\u00e9", mode="dpr-string-title")


def test_dpr_string_nfd_normalises_both_sides():
    assert has([NFC_ZURICH], f"lives in {NFD_ZURICH} now")
    assert has([NFD_ZURICH], f"lives in {NFC_ZURICH} now")
    assert has([NFC_ZURICH], f"lives in {NFC_ZURICH} now")
    # ... but an accent is not dropped: Zürich and Zurich differ.
    assert not has(["Zurich"], f"lives in {NFC_ZURICH} now")
    assert not has([NFC_ZURICH], "lives in Zurich now")
    # A combining mark belongs to the token before it.
    assert not has(["e"], "caf e\u0301 au lait")
    assert has(["\u00e9"], "caf e\u0301 au lait")


def test_eq_string_normalises_only_the_answer():
    assert not has([NFC_ZURICH], f"lives in {NFC_ZURICH} now", mode="eq-string")
    assert has([NFC_ZURICH], f"lives in {NFD_ZURICH} now", mode="eq-string")
    assert has([NFD_ZURICH], f"lives in {NFD_ZURICH} now", mode="eq-string")
    assert not has([NFD_ZURICH], f"lives in {NFC_ZURICH} now", mode="eq-string")
    assert has(["Zurich"], "lives in Zurich now", mode="eq-string")  # ASCII: no difference
    # Compatibility characters are not folded by NFD in either convention.
    assert not has(["fi"], "the \ufb01nal", mode="eq-string")
    assert not has(["fi"], "the \ufb01nal", mode="dpr-string")


@pytest.mark.parametrize("smode", STRING_MODES)
def test_cjk_runs_are_single_tokens(smode):
    assert not has(["北京"], "北京大学是一所大学", mode=smode)
    assert not has(["北京"], "他在北京 工作", mode=smode)  # "他在北京" is one token
    assert has(["北京"], "他在 北京 工作", mode=smode)
    assert has(["北京"], "他在「北京」工作", mode=smode)  # brackets are single-character tokens
    assert has(["北京大学"], "北京大学", mode=smode)


@pytest.mark.parametrize("smode", STRING_MODES)
def test_multiple_answers_any_one_suffices(smode):
    assert has(["Lyon", "Paris"], "He was born in Paris.", mode=smode)
    assert not has(["Lyon", "Marseille"], "He was born in Paris.", mode=smode)
    assert not has([], "He was born in Paris.", mode=smode)


@pytest.mark.parametrize("smode", STRING_MODES)
def test_empty_answer_matches_every_passage_like_the_reference(smode):
    assert has([""], "anything", mode=smode)
    assert has(["  "], "", mode=smode)
    assert has(["", "nope"], "x", mode=smode)


def test_none_text_never_has_the_answer():
    assert not has([""], None)
    assert not has(["x"], None, mode="regex")


@pytest.mark.parametrize("smode", STRING_MODES)
def test_greek_final_sigma_answer(smode):
    # Per-token lower-casing on both sides: "ΟΔΟΣ" -> "οδος" (final sigma) in both.
    assert has(["ΟΔΟΣ"], "η ΟΔΟΣ.", mode=smode)
    assert has(["οδο\u03c2"], "η ΟΔΟΣ.", mode=smode)
    assert not has(["οδο\u03c3"], "η ΟΔΟΣ.", mode=smode)  # medial sigma is a different token
    assert has(["ΑΣ"], "ΑΣ.Β", mode=smode)  # whole-text lower would give "ασ" here


def test_contains_token_sequence():
    assert contains_token_sequence(["a", "b", "a", "c"], ["a", "c"])
    assert contains_token_sequence(["a"], [])
    assert contains_token_sequence([], [])
    assert not contains_token_sequence([], ["a"])
    assert not contains_token_sequence(["a", "b"], ["b", "a"])
    assert not contains_token_sequence(["a", "b"], ["a", "b", "c"])


# --------------------------------------------------------------------------- title modes


def test_minimal_case_title_text_separator():
    # Issue #12: answers ["a b"], title "a", text "b": EntityQuestions joins with " ",
    # DPR with " . ".
    assert has(["a b"], "b", "a", mode="eq-string-title")
    assert not has(["a b"], "b", "a", mode="dpr-string-title")
    assert not has(["a b"], "b", "a", mode="eq-string")


def test_dpr_string_title_joins_title_and_text_by_a_dot():
    assert has(["Obama"], "He was president.", "Barack Obama", mode="dpr-string-title")
    assert not has(["Obama"], "He was president.", "Barack Obama", mode="dpr-string")
    assert has(["president"], "He was president.", "Barack Obama", mode="dpr-string-title")
    # DPR joins with " . ": an answer cannot span title end + text start...
    assert not has(["New York"], "York City", "New", mode="dpr-string-title")
    # ... and the dot itself is a token.
    assert has(["New . York"], "York City", "New", mode="dpr-string-title")
    assert not has(["New . York"], "York City", "New", mode="eq-string-title")


def test_eq_string_title_joins_title_and_text_by_a_space():
    assert has(["Obama"], "He was president.", "Barack Obama", mode="eq-string-title")
    assert not has(["Obama"], "He was president.", "Barack Obama", mode="eq-string")
    assert has(["Obama He"], "He was president.", "Barack Obama", mode="eq-string-title")
    assert has(["New York"], "York City", "New", mode="eq-string-title")
    assert has(["Obama"], "x", "Barack Obama", mode="eq-string-title")
    # The title is not normalised either.
    assert not has([NFC_ZURICH], "x", NFC_ZURICH, mode="eq-string-title")
    assert has([NFC_ZURICH], "x", NFC_ZURICH, mode="dpr-string-title")
    assert has(["x"], "x", None, mode="eq-string-title")  # a missing title counts as ""


def test_title_mode_is_a_lowercase_stripped_prefix_test():
    assert has(["Paris"], "text ignored", "Paris Saint-Germain F.C.", mode="title")
    assert has(["  paris "], "", " PARIS", mode="title")
    assert has(["Paris"], "", "Parisian culture", mode="title")  # character prefix
    assert not has(["aris"], "", "Paris", mode="title")
    assert not has(["Paris"], "Paris Paris", "Lyon", mode="title")
    assert has([""], "", "Anything", mode="title")
    assert not has([], "", "Anything", mode="title")
    # No NFD in this mode (EntityQuestions normalized_title): NFC vs NFD differ.
    assert not has([NFC_ZURICH], "", NFD_ZURICH, mode="title")
    assert has([NFC_ZURICH], "", NFC_ZURICH + " (city)", mode="title")


# --------------------------------------------------------------------------- regex mode


def test_regex_mode():
    assert has([r"Pa.is"], "born in Paris", mode="regex")
    assert has([r"pa.is"], "born in PARIS", mode="regex")  # IGNORECASE
    assert has([r"^born"], "x\nborn", mode="regex")  # MULTILINE
    assert not has([r"^born"], "x born", mode="regex")
    assert has([r"\d{4}"], "in 1990", mode="regex")
    assert has([r"ris"], "born in Paris", mode="regex")  # search, not token match
    # The passage text is NFD-normalised: "." matches the base letter u, the mark follows.
    assert has([r"zu.rich"], NFC_ZURICH, mode="regex")
    assert not has([r"z.rich"], NFC_ZURICH, mode="regex")


def test_invalid_regex_matches_nothing_by_default_and_can_raise():
    assert not has(["(unclosed"], "(unclosed", mode="regex")
    assert has(["(unclosed", "clo"], "(unclosed", mode="regex")  # other answers still count
    with pytest.raises(ValueError, match=r"\(unclosed"):
        has(["(unclosed"], "text", mode="regex", on_invalid_regex="raise")


def test_unknown_and_renamed_modes_are_rejected_with_the_valid_ones():
    with pytest.raises(ValueError, match="unknown has_answer mode 'fuzzy'.*eq-string, "):
        has(["x"], "x", mode="fuzzy")
    for old in ("string", "title_string"):
        with pytest.raises(ValueError, match=f"'{old}' was split in two.*valid modes"):
            check_mode(old)
    for mode in MODES:
        assert check_mode(mode) == mode
    with pytest.raises(ValueError, match="unknown has_answer mode"):
        has_answer_matrix([["x"]], [["p1"]], PASSAGES, "string")


def test_bad_answers():
    with pytest.raises(TypeError):
        has("Paris", "Paris")


# --------------------------------------------------------------------------- batch API


PASSAGES = {
    "p1": ("Paris", "Paris is the capital of France."),
    "p2": ("Yorkshire", "Yorkshire is a county in England."),
    "p3": ("New York City", "The U.S. city of New York."),
    4: (NFC_ZURICH, f"{NFD_ZURICH} lies on a lake."),
    "none": ("Nothing", None),
}


def test_has_answer_matrix_hand_derived():
    answers = [["France"], ["York"], [NFC_ZURICH, "nope"], ["x"], []]
    ranked = [["p2", "p1", "p3"], ["p2", "p3"], ["p1", 4], [], ["p1"]]
    assert has_answer_matrix(answers, ranked, PASSAGES) == [
        [False, True, False],
        [False, True],
        [False, True],
        [],
        [False],
    ]
    assert has_answer_matrix(answers, ranked, PASSAGES, mode="title") == [
        [False, False, False],
        [True, False],  # "york" is a character prefix of the title "yorkshire"
        [False, True],
        [],
        [False],
    ]
    assert has_answer_matrix([["New York"]], [["p3", "p2"]], PASSAGES, "dpr-string-title") == [
        [True, False]
    ]
    # NFC answer, passage 4 holds the NFD spelling; passage "p5" the NFC one.
    store = {**PASSAGES, "p5": ("", f"{NFC_ZURICH}!")}
    assert has_answer_matrix([[NFC_ZURICH]], [[4, "p5"]], store, "eq-string") == [[True, False]]
    assert has_answer_matrix([[NFC_ZURICH]], [[4, "p5"]], store, "dpr-string") == [[True, True]]
    assert has_answer_matrix([[r"cap\w+"]], [["p1", "p2", "none"]], PASSAGES, "regex") == [
        [True, False, False]
    ]


def test_has_answer_matrix_errors():
    with pytest.raises(ValueError, match="one of each"):
        has_answer_matrix([["a"]], [], PASSAGES)
    with pytest.raises(KeyError, match="missing"):
        has_answer_matrix([["a"]], [["missing"]], PASSAGES)
    assert has_answer_matrix([], [], PASSAGES) == []


def test_each_distinct_passage_is_tokenised_once(monkeypatch):
    import tasks.evaluation.string_judge as string_judge

    tokenised = []

    def counting(source):
        tokenised.append(source)
        return joined_tokens(source)

    monkeypatch.setattr(string_judge, "joined_tokens", counting)
    ranked = [["p1", "p2", "p3"], ["p3", "p1"], ["p1", "p1"]]
    got = has_answer_matrix([["France"], ["York"], ["Paris"]], ranked, PASSAGES, "eq-string")
    assert got == [[True, False, False], [True, False], [True, True]]
    # p2 never holds a screened answer token; p1 and p3 are tokenised once each.
    assert sorted(tokenised) == sorted([PASSAGES["p1"][1], PASSAGES["p3"][1]])
