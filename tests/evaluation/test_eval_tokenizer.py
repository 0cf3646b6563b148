"""SimpleTokenizer semantics (DrQA / DPR), with hand-derived expectations."""

import random
import sys

import regex

from tasks.evaluation.tokenizer import SimpleTokenizer, tokenize, words

# The reference pattern and flags, written out independently of the module under test.
DPR_RE = regex.compile(
    r"([\p{L}\p{N}\p{M}]+)|([^\p{Z}\p{C}])",
    flags=regex.IGNORECASE + regex.UNICODE + regex.MULTILINE,
)


def dpr_words(text, uncased=True):
    tokens = [m.group() for m in DPR_RE.finditer(text)]
    return [t.lower() for t in tokens] if uncased else tokens


def test_punctuation_splits_into_single_character_tokens():
    assert tokenize("the U.S. army") == ["the", "U", ".", "S", ".", "army"]
    assert tokenize("Hello, world!") == ["Hello", ",", "world", "!"]
    assert tokenize("don't") == ["don", "'", "t"]
    assert tokenize("3.14") == ["3", ".", "14"]
    assert tokenize("...") == [".", ".", "."]


def test_whitespace_and_control_characters_are_not_tokens():
    assert tokenize("a\tb\nc  d") == ["a", "b", "c", "d"]
    assert tokenize("a\u00a0b") == ["a", "b"]  # no-break space is Zs
    assert tokenize("ab\u00adcd") == ["ab", "cd"]  # soft hyphen is Cf: splits, not a token
    assert tokenize("ab\u200bcd") == ["ab", "cd"]  # zero-width space is Cf
    assert tokenize("") == []
    assert tokenize(" \t\n ") == []


def test_unicode_letters_marks_and_numbers():
    assert tokenize("北京大学") == ["北京大学"]  # CJK letters form one run
    assert tokenize("北京 大学") == ["北京", "大学"]
    assert tokenize("e\u0301t\u00e9") == ["e\u0301t\u00e9"]  # combining mark stays in the run
    assert tokenize(" \u0301") == ["\u0301"]  # a lone combining mark is a token
    assert tokenize("x² ½") == ["x²", "½"]  # No is \p{N}
    assert tokenize("a😀b") == ["a", "😀", "b"]  # So: single-character token
    assert tokenize("1–2") == ["1", "–", "2"]


def test_words_lowercases_each_token_separately():
    assert words("The U.S. Army") == ["the", "u", ".", "s", ".", "army"]
    assert words("The U.S. Army", uncased=False) == ["The", "U", ".", "S", ".", "Army"]
    # Final sigma: per-token lower-casing sees "ΑΣ" alone and gives the final form,
    # while lower-casing the whole string would not ("ΑΣ.Β".lower() == "ασ.β").
    assert "ΑΣ.Β".lower() == "ασ.β"
    assert words("ΑΣ.Β") == ["ας", ".", "β"]
    assert words("İ") == ["i\u0307"]
    assert words("ΣΟΦΙΑ ΟΔΟΣ") == ["σοφια", "οδος"]


def test_class_api():
    tok = SimpleTokenizer()
    assert tok.tokenize("A-b") == ["A", "-", "b"]
    assert tok.words("A-b") == ["a", "-", "b"]


def test_agrees_with_reference_pattern_on_every_code_point():
    text = "".join(chr(i) for i in range(sys.maxunicode + 1) if not 0xD800 <= i <= 0xDFFF)
    assert tokenize(text) == dpr_words(text, uncased=False)
    assert words(text) == dpr_words(text)


def test_agrees_with_reference_on_random_strings():
    rng = random.Random(1234)
    alphabet = "aAzZ09 .,'-\t\n\u00a0\u00ad\u0301\u0308üÜßİΣσς北京😀²–¿ǅﬁ\u200b"
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        assert words(text) == dpr_words(text), repr(text)
        assert tokenize(text) == dpr_words(text, uncased=False), repr(text)


def _token_class(ch):
    m = DPR_RE.fullmatch(ch)
    if m is None:
        return 0  # not a token
    return 1 if m.group(1) is not None else 2  # letter/number/mark run vs single character


def test_lower_casing_preserves_token_classes_on_every_code_point():
    # words() lower-cases before tokenising (unless the text holds a capital sigma): sound
    # only if lower-casing never changes how a character joins or splits tokens.
    for i in range(sys.maxunicode + 1):
        c = chr(i)
        lowered = c.lower()
        if lowered == c:
            continue
        k = _token_class(c)
        classes = [_token_class(x) for x in lowered]
        if k == 2:
            assert len(lowered) == 1 and classes == [2], hex(i)
        else:
            assert all(x == k for x in classes), hex(i)


def test_lower_casing_never_produces_a_space():
    # has_answer joins tokens with spaces; this is the property that makes it sound.
    for i in range(sys.maxunicode + 1):
        c = chr(i)
        if not c.isspace():
            assert " " not in c.lower(), hex(i)
