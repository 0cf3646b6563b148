"""Copy units of the paraphraser's tokenizer: OOV words, extended ids, decoding."""

from __future__ import annotations

import pytest
import sentencepiece as spm

from models.paraphraser.tokenizer import ParaphraseTokenizer

SENTENCES = [
    "what is the capital of france?", "who wrote the book about cats?",
    "where was the man born?", "when did the war end?", "how tall is the tower?",
    "who founded the company?", "which city is the capital of france?",
] * 5


def _train(path, byte_fallback: bool) -> str:
    prefix = str(path / ("bytes" if byte_fallback else "unk"))
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(SENTENCES), model_prefix=prefix,
        vocab_size=300 if byte_fallback else 60, hard_vocab_limit=False,
        byte_fallback=byte_fallback, character_coverage=1.0, minloglevel=2)
    return prefix + ".model"


@pytest.fixture(scope="module", params=[False, True], ids=["unk", "byte-fallback"])
def tok(request, tmp_path_factory) -> ParaphraseTokenizer:
    path = tmp_path_factory.mktemp("spm")
    return ParaphraseTokenizer(_train(path, request.param), lowercase=True, max_len=32)


def test_specials_follow_sentencepiece(tok):
    n = tok.spm_vocab_size
    assert (tok.pad_id, tok.bos_id, tok.eos_id, tok.sep_id, tok.none_id) == tuple(
        range(n, n + 5))
    assert tok.vocab_size == n + 5


def test_in_vocabulary_words_are_pieces(tok):
    units = tok.encode_word("cats?")
    assert all(not u.is_oov for u in units)
    assert [u.piece_id for u in units] == tok.sp.encode("cats?")


@pytest.mark.parametrize(("word", "expected"), [
    ("zyx?", ["zyx", "?"]),          # trailing punctuation stays an in-vocab piece
    ("kraków", ["kraków"]),          # one unknown character makes the whole word one unit
    ("ßøж", ["ßøж"]),
])
def test_oov_word_is_one_copy_unit(tok, word, expected):
    units = tok.encode_word(word)
    shown = [u.surface if u.is_oov else tok.sp.id_to_piece(u.piece_id) for u in units]
    assert shown == expected
    assert units[0].is_oov and units[0].word_start


def test_source_layout_and_extended_ids(tok):
    enc = tok.encode_source("Zyx kraków", "where was the man (zyx) born? zyx")
    assert enc.oov_words[:2] == ["zyx", "kraków"]  # lower-cased, order of first appearance
    sep = enc.input_ids.index(tok.sep_id)
    assert enc.input_ids[:sep] == [tok.unk_id, tok.unk_id]  # the encoder sees <unk>
    assert enc.ext_ids[:sep] == [tok.vocab_size, tok.vocab_size + 1]
    # a repeated OOV word gets the same extended id
    assert enc.ext_ids[-1] == tok.vocab_size
    assert len(enc.input_ids) == len(enc.ext_ids)


@pytest.mark.parametrize("suggestion", [None, ""])
def test_no_suggestion_is_none_token(tok, suggestion):
    enc = tok.encode_source(suggestion, "who wrote the book?")
    assert enc.input_ids[:2] == [tok.none_id, tok.sep_id]
    assert enc.oov_words == []


def test_target_copies_source_oov_and_decodes_to_surface(tok):
    enc = tok.encode_source("ßøж", "where was kraków (the) man born?")
    target = "where was the ßøж of kraków born?"
    ids = tok.encode_target(target, enc)
    assert ids[-1] == tok.eos_id
    assert tok.vocab_size in ids and tok.vocab_size + 1 in ids
    assert tok.decode(ids, enc.oov_words, enc.oov_word_start) == target


def test_target_only_oov_uses_raw_pieces(tok):
    enc = tok.encode_source(None, "who wrote the book?")
    ids = tok.encode_target("who wrote the ßøж book?", enc)
    assert all(i < tok.vocab_size for i in ids)
    text = tok.decode(ids)
    if tok.sp.is_byte(tok.sp.piece_to_id("<0x41>")):  # byte fallback spells it exactly
        assert text == "who wrote the ßøж book?"
    else:
        assert text.startswith("who wrote the") and text.endswith("book?")


def test_forced_oov_words_are_copy_units(tok):
    enc = tok.encode_source("author", "who wrote the book?", force={"book", "author"})
    assert enc.oov_words == ["author", "book"]
    ids = tok.encode_target("who is the author of the book?", enc, force={"book", "author"})
    assert tok.vocab_size in ids and tok.vocab_size + 1 in ids
    assert tok.decode(ids, enc.oov_words, enc.oov_word_start) == (
        "who is the author of the book?")


def test_source_is_truncated_to_max_len(tok):
    enc = tok.encode_source("capital", " ".join(["the capital of france"] * 40))
    assert len(enc.input_ids) <= tok.max_len
    ids = tok.encode_target(" ".join(["the book"] * 40), enc)
    assert len(ids) <= tok.max_len and ids[-1] == tok.eos_id


def test_decode_skips_specials_and_stops_at_eos(tok):
    ids = tok.sp.encode("who wrote") + [tok.sep_id, tok.none_id, tok.eos_id] + tok.sp.encode(
        "the book")
    assert tok.decode(ids) == "who wrote"


def test_missing_model_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="SentencePiece model not found"):
        ParaphraseTokenizer(tmp_path / "nope.model")


@pytest.fixture(scope="module")
def whole(tmp_path_factory) -> ParaphraseTokenizer:
    """The unk vocabulary (60 pieces) with words of >= 3 pieces copied whole."""
    path = tmp_path_factory.mktemp("spm-whole")
    return ParaphraseTokenizer(_train(path, False), max_len=32, copy_word_pieces=3)


def _core_pieces(tok, word):
    return [p for p in tok.sp.encode(word, out_type=str) if p != "\u2581"]


def test_long_words_are_whole_word_copy_units(whole):
    long = next(w for w in ("capital", "company", "founded", "france")
                if len(_core_pieces(whole, w)) >= 3)
    short = next(w for w in ("the", "is", "man", "war") if len(_core_pieces(whole, w)) < 3)
    (unit,) = whole.encode_word(long)
    assert unit.is_oov and unit.surface == long and unit.word_start
    assert list(unit.pieces) == whole.sp.encode(long)   # the encoder still reads the pieces
    assert not whole.is_oov(long)                        # it is not an unknown word
    assert all(not u.is_oov for u in whole.encode_word(short))
    # punctuation around the core stays a piece of its own
    units = whole.encode_word(long + "?")
    assert units[0].is_oov and units[0].surface == long and not units[-1].is_oov


def test_whole_word_unit_in_source_target_and_decoding(whole):
    long = next(w for w in ("capital", "company", "founded", "france")
                if len(_core_pieces(whole, w)) >= 3)
    enc = whole.encode_source(None, f"what is the {long} of it?")
    k = enc.oov_words.index(long)
    ext = whole.vocab_size + k
    positions = [i for i, e in enumerate(enc.ext_ids) if e == ext]
    assert len(positions) == len(whole.sp.encode(long)) >= 2
    assert [enc.input_ids[i] for i in positions] == whole.sp.encode(long)
    assert whole.unk_id not in [enc.input_ids[i] for i in positions]
    target = whole.encode_target(f"which {long} is it?", enc)
    assert target.count(ext) == 1                        # one id for the whole word
    assert whole.decode(target, enc.oov_words, enc.oov_word_start) == f"which {long} is it?"
    # a long word only in the target is spelled by its pieces
    other = whole.encode_source(None, "what is it?")
    spelled = whole.encode_target(f"the {long}", other)
    assert all(i < whole.spm_vocab_size for i in spelled[:-1])
    assert whole.decode(spelled) == f"the {long}"


def test_whole_word_units_are_off_by_default(tok):
    assert tok.copy_word_pieces is None
    assert all(not u.is_oov for u in tok.encode_word("capital"))
    with pytest.raises(ValueError, match="copy_word_pieces"):
        ParaphraseTokenizer(tok.model_proto, copy_word_pieces=0)
