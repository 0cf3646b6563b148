"""Randomized comparison of the batch and single-passage has_answer APIs, in every mode, with a
straightforward transcription of the reference functions (EntityQuestions has_answer_fn.py,
DPR qa_validation.py)."""

import random
import unicodedata

import pytest
import regex

from tasks.evaluation.has_answer import MODES, has_answer_matrix, passage_has_answer

NFC_ZURICH = "Z\u00fcrich"
NFD_ZURICH = "Zu\u0308rich"

# --------------------------------------------------------------------------- randomized


_REF_TOKEN = regex.compile(
    r"([\p{L}\p{N}\p{M}]+)|([^\p{Z}\p{C}])",
    flags=regex.IGNORECASE + regex.UNICODE + regex.MULTILINE,
)


def _ref_words(text):
    return [m.group().lower() for m in _REF_TOKEN.finditer(text)]


def _ref_match(answers, tokens):
    for answer in answers:
        answer_tokens = _ref_words(unicodedata.normalize("NFD", answer))
        for i in range(0, len(tokens) - len(answer_tokens) + 1):
            if answer_tokens == tokens[i : i + len(answer_tokens)]:
                return True
    return False


def reference_has_answer(answers, title, text, mode):
    """Straightforward transcription of the reference functions, one passage at a time."""
    if mode == "title":  # EntityQuestions normalized_title
        return any(title.lower().strip().startswith(a.lower().strip()) for a in answers)
    if text is None:
        return False
    if mode == "eq-string":  # EntityQuestions string_match: the text is not normalised
        return _ref_match(answers, _ref_words(text))
    if mode == "eq-string-title":  # EntityQuestions string_title_match
        return _ref_match(answers, _ref_words(f"{title} {text}"))
    if mode == "dpr-string-title":  # DPR check_answer_from_meta(use_title=True)
        text = title + " . " + text
    text = unicodedata.normalize("NFD", text)  # DPR has_answer
    if mode == "regex":
        for answer in answers:
            try:
                pattern = regex.compile(
                    unicodedata.normalize("NFD", answer),
                    flags=regex.IGNORECASE + regex.UNICODE + regex.MULTILINE,
                )
            except Exception:
                continue
            if pattern.search(text) is not None:
                return True
        return False
    return _ref_match(answers, _ref_words(text))


VOCAB = [
    "Paris", "paris", "PARIS", NFC_ZURICH, NFD_ZURICH, "Zurich", "U.S.", "US", "new", "York",
    "york", "Yorkshire", "ΑΣ", "οδος", "ΟΔΟΣ", "北京", "大学", "北京大学", "-", ",", "'", ".",
    "\u00e9", "e\u0301", "e", "ǅ", "İ", "i", "ß", "SS", "ﬁ", "x²", "1990", "(", ")", "a", "the",
]  # fmt: skip
SEPARATORS = [" ", " ", " ", "", "\t", "\u00a0", "\n", "\u00ad", "."]
PATTERN_EXTRAS = ["(", "[a-", ".", "^", "$", r"\d+", "*", "e.", "u."]


def _random_text(rng, n_min, n_max):
    parts = []
    for _ in range(rng.randint(n_min, n_max)):
        parts.append(rng.choice(VOCAB))
        parts.append(rng.choice(SEPARATORS))
    return "".join(parts)


def _random_answer(rng, passage_texts, mode):
    r = rng.random()
    if mode == "regex" and r < 0.3:
        return rng.choice(VOCAB) + rng.choice(PATTERN_EXTRAS) + rng.choice(["", rng.choice(VOCAB)])
    if r < 0.05:
        return rng.choice(["", " "])
    if r < 0.55 and passage_texts:
        source = rng.choice(passage_texts)
        if source:
            start = rng.randrange(len(source))
            return source[start : start + rng.randint(1, 12)]
    return _random_text(rng, 1, 3)


@pytest.mark.parametrize("mode", MODES)
def test_matrix_agrees_with_reference_on_random_data(mode):
    rng = random.Random(20210915)
    pool = {}
    for i in range(150):
        text = None if rng.random() < 0.02 else _random_text(rng, 0, 12)
        pool[f"d{i}" if i % 2 else i] = (_random_text(rng, 1, 3), text)
    ids = list(pool)
    texts = [t for _, t in pool.values() if t]
    titles = [t for t, _ in pool.values()]
    answers_per_question, ranked = [], []
    for _ in range(250):
        ranked.append([rng.choice(ids) for _ in range(rng.randint(0, 12))])
        source = titles if mode == "title" else texts
        answers_per_question.append(
            [_random_answer(rng, source, mode) for _ in range(rng.randint(0, 3))]
        )

    got = has_answer_matrix(answers_per_question, ranked, pool, mode=mode)
    expected = [
        [reference_has_answer(answers, *pool[pid], mode) for pid in row]
        for answers, row in zip(answers_per_question, ranked, strict=True)
    ]
    assert got == expected
    flat = [x for row in got for x in row]
    assert any(flat) and not all(flat)  # the data exercise both outcomes
    # The single-passage API agrees too.
    for answers, row, got_row in zip(answers_per_question[:50], ranked, got, strict=False):
        for pid, value in zip(row, got_row, strict=True):
            title, text = pool[pid]
            assert passage_has_answer(answers, text, title, mode) == value
