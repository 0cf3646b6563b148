"""The pointer-generator network and decoding on an untrained model (fast, no Lightning)."""

from __future__ import annotations

import pytest
import sentencepiece as spm
import torch

from models.paraphraser.checkpoint import Paraphraser, _model_config
from models.paraphraser.config import ParaphraserConfig
from models.paraphraser.data import Collator
from models.paraphraser.network import PointerGeneratorTransformer, sequence_loss

SENTENCES = [
    "what is the capital of france?", "who wrote the book about cats?",
    "where was the man born?", "when did the war end?", "how tall is the tower?",
] * 5
INPUTS = [
    ("capital", "what is the capital of france?"),
    (None, "who wrote the book about cats?"),
    ("ßøж", "where was the man born?"),
    ("the war", "when did the war end? kraków"),
    ("tower height", "how tall is the tower?"),
]


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def para(tmp_path_factory) -> Paraphraser:
    from models.paraphraser.tokenizer import ParaphraseTokenizer

    prefix = str(tmp_path_factory.mktemp("spm") / "tiny")
    spm.SentencePieceTrainer.train(sentence_iterator=iter(SENTENCES), model_prefix=prefix,
                                   vocab_size=60, hard_vocab_limit=False,
                                   character_coverage=1.0, minloglevel=2)
    cfg = ParaphraserConfig(d_model=32, heads=2, layers=2, ff=64, dropout=0.1, max_len=24)
    tok = ParaphraseTokenizer(prefix + ".model", max_len=cfg.max_len)
    torch.manual_seed(0)
    return Paraphraser(PointerGeneratorTransformer(_model_config(cfg, tok)), tok)


def _batch(para: Paraphraser):
    triples = [(src, sug, f"{sug or ''} {src}") for sug, src in INPUTS]
    return Collator(para.tokenizer)(triples)


def test_distribution_is_normalised_over_extended_vocabulary(para):
    b = _batch(para)
    assert b.n_oov >= 1
    with torch.no_grad():
        log_probs = para.model(b.src_ids, b.src_ext, b.src_mask, b.dec_ids, b.n_oov)
    assert log_probs.shape[-1] == para.tokenizer.vocab_size + b.n_oov
    torch.testing.assert_close(log_probs.exp().sum(-1), torch.ones(log_probs.shape[:2]),
                               atol=1e-4, rtol=0)


def test_pure_copy_puts_all_mass_on_source_tokens(para):
    model = PointerGeneratorTransformer(para.config).eval()
    model.load_state_dict(para.model.state_dict())
    with torch.no_grad():
        model.p_gen.weight.zero_()
        model.p_gen.bias.fill_(-60.0)  # p_gen ~ 0: copy only
    b = _batch(para)
    with torch.no_grad():
        probs = model(b.src_ids, b.src_ext, b.src_mask, b.dec_ids, b.n_oov).exp()
    for row in range(b.src_ids.shape[0]):
        source_ids = set(b.src_ext[row][b.src_mask[row]].tolist())
        on_source = probs[row][:, sorted(source_ids)].sum(-1)
        torch.testing.assert_close(on_source, torch.ones_like(on_source), atol=1e-4, rtol=0)
    # the OOV word of example 2 ("ßøж") can only be produced through its extended id
    oov_id = para.tokenizer.vocab_size
    assert oov_id in b.src_ext[2].tolist()
    assert float(probs[2, :, oov_id].min()) > 0


def test_incremental_decoding_matches_teacher_forcing(para):
    b = _batch(para)
    model = para.model
    with torch.no_grad():
        full = model(b.src_ids, b.src_ext, b.src_mask, b.dec_ids, b.n_oov)
        state = model.encode(b.src_ids, b.src_mask)
        caches = [{} for _ in model.decoder]
        steps = [model.decode(state, b.dec_ids[:, t : t + 1], b.src_ext, b.n_oov, caches,
                              offset=t) for t in range(b.dec_ids.shape[1])]
    torch.testing.assert_close(torch.cat(steps, dim=1), full, atol=1e-4, rtol=1e-4)


def test_label_smoothing_loss():
    log_probs = torch.log_softmax(torch.randn(2, 3, 10), dim=-1)
    labels = torch.tensor([[1, 2, 9], [3, 9, 9]])  # 9 is padding
    plain, nll = sequence_loss(log_probs, labels, pad_id=9, vocab_size=8)
    assert torch.equal(plain, nll)
    expected = -(log_probs[0, 0, 1] + log_probs[0, 1, 2] + log_probs[1, 0, 3]) / 3
    torch.testing.assert_close(nll, expected)
    smoothed, nll2 = sequence_loss(log_probs, labels, pad_id=9, vocab_size=8,
                                   label_smoothing=0.1)
    torch.testing.assert_close(nll2, nll)
    assert not torch.equal(smoothed, nll)


def test_beam_size_one_is_greedy(para):
    greedy = para.greedy(INPUTS, max_len=12)
    assert para.generate(INPUTS, beam_size=1, max_len=12) == greedy
    assert all(isinstance(text, str) for text in greedy)


def test_batched_generation_equals_one_at_a_time(para):
    batched = para.generate(INPUTS, beam_size=3, max_len=10, min_len=4, batch_size=8)
    single = [para.generate([item], beam_size=3, max_len=10, min_len=4)[0] for item in INPUTS]
    assert batched == single
    assert para.generate(INPUTS[::-1], beam_size=3, max_len=10, min_len=4) == batched[::-1]


def test_score_is_teacher_forced_log_likelihood(para):
    targets = [src for _, src in INPUTS]
    mean = para.score(INPUTS, targets)
    total = para.score(INPUTS, targets, normalize=False)
    assert all(t <= m <= 0 for t, m in zip(total, mean, strict=True))
    assert para.score(INPUTS[:1], targets[:1]) == pytest.approx(mean[:1], abs=1e-5)


def test_generate_rejects_bad_inputs(para):
    with pytest.raises(ValueError, match=r"inputs\[1\]: source"):
        para.generate([(None, "who wrote it?"), ("x", "")])
    with pytest.raises(ValueError, match=r"inputs\[0\]: expected"):
        para.generate(["who wrote it?"])
    assert para.generate([]) == []


def _stuck_on(para: Paraphraser, word: str) -> tuple[Paraphraser, int]:
    """The model with its vocabulary distribution forced onto the one piece of ``word`` (no
    copying): left alone it writes that piece at every step."""
    model = PointerGeneratorTransformer(para.config).eval()
    model.load_state_dict(para.model.state_dict())
    (piece,) = para.tokenizer.sp.encode(word)  # "wh": one word-start piece of the tiny vocab
    with torch.no_grad():
        model.p_gen.bias.fill_(60.0)  # p_gen ~ 1: the vocabulary distribution only
        model.out_bias[piece] = 50.0
    return Paraphraser(model, para.tokenizer), piece


def _ids(para: Paraphraser, inputs, block: bool, beam: int) -> list[list[int]]:
    from models.paraphraser.generation import beam_search

    out: dict[int, list[int]] = {}
    for idx, _, batch in para._batches(inputs, 8, block):
        hyps = beam_search(para.model, batch, beam, 8, para._blocked, 1.0, 1)
        out.update(zip(idx, hyps, strict=True))
    return [out[i] for i in range(len(inputs))]


def _doubles(ids: list[int]) -> int:
    return sum(a == b for a, b in zip(ids, ids[1:], strict=False))


@pytest.mark.parametrize("beam", [1, 3])
def test_block_repeats_never_writes_a_token_twice_in_a_row(para, beam):
    stuck, piece = _stuck_on(para, "wh")
    loose = _ids(stuck, INPUTS, block=False, beam=beam)
    assert all(_doubles(ids) >= 3 and set(ids) == {piece} for ids in loose)
    blocked = _ids(stuck, INPUTS, block=True, beam=beam)
    assert all(_doubles(ids) == 0 and piece in ids for ids in blocked)
    # the text level: the generate default is the checkpoint's setting
    assert stuck.config.block_repeats is True
    assert stuck.generate(INPUTS, beam_size=beam, max_len=8) == [
        stuck.tokenizer.decode(ids) for ids in blocked]
    assert stuck.greedy(INPUTS, max_len=8, block_repeats=False)[0].split() == ["wh"] * 8


def test_block_repeats_allows_what_the_input_doubles(para):
    stuck, piece = _stuck_on(para, "wh")
    inputs = [(None, "where was wh wh born?"), ("wh wh", "how tall is the tower?"),
              (None, "how tall is the tower?")]
    doubled = [stuck._doubled(item, stuck.tokenizer.encode_source(*item)) for item in inputs]
    assert doubled == [frozenset({piece}), frozenset({piece}), frozenset()]
    ids = _ids(stuck, inputs, block=True, beam=1)
    assert _doubles(ids[0]) >= 1 and _doubles(ids[1]) >= 1 and _doubles(ids[2]) == 0


def test_checkpoints_saved_without_the_option_do_not_block(para, tmp_path):
    import json

    para.save_pretrained(tmp_path / "p")
    config = json.loads((tmp_path / "p" / "config.json").read_text())
    assert config["block_repeats"] is True
    del config["block_repeats"]  # a checkpoint written before the option existed
    (tmp_path / "p" / "config.json").write_text(json.dumps(config))
    assert Paraphraser.from_pretrained(tmp_path / "p").config.block_repeats is False
