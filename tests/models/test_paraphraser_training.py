"""Train a tiny paraphraser (d_model 64, 2 layers) once; check overfitting, copying, reloading.

The copy data teaches "insert the suggestion word before the noun" with made-up training words;
the test words contain characters the SentencePiece vocabulary has never seen, so they are
out of vocabulary and can only be produced by the copy mechanism (extended ids).
"""

from __future__ import annotations

import json
import random

import pytest
import sentencepiece as spm
import torch

from models.paraphraser import ParaphraserConfig, load_paraphraser, train_paraphraser

FREE = [  # a handful of free paraphrases to overfit
    ("what is the capital of france?", "city", "which city is the capital of france?"),
    ("who wrote the book about cats?", "author", "who is the author of the book about cats?"),
    ("where was the singer born?", None, "what is the birthplace of the singer?"),
    ("when did the war end?", "year", "in which year did the war end?"),
    ("how tall is the tower?", "height", "what is the height of the tower?"),
    ("who founded the company?", "founder", "who is the founder of the company?"),
]
TEMPLATES = [  # (source, target with the suggestion inserted)
    ("who wrote the novel?", "who wrote the {} novel?"),
    ("where is the city?", "where is the {} city?"),
    ("what did the man see?", "what did the {} man see?"),
]
OOV_WORDS = ["ßøж", "çàñ", "kraków", "zyxw", "éèêq"]


def _copy_triples(n_words: int) -> list[tuple[str, str | None, str]]:
    rng = random.Random(0)
    syllables = ["ba", "do", "ki", "lu", "me", "no", "pa", "ri", "su", "te", "go", "ma"]
    words: set[str] = set()
    while len(words) < n_words:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 3))))
    triples = [(src, w, tgt.format(w)) for w in sorted(words) for src, tgt in TEMPLATES]
    return triples + [(src, None, src) for src, _ in TEMPLATES]


CONFIG = dict(d_model=64, heads=4, layers=2, ff=128, dropout=0.0, max_len=32, lr=3e-3,
              warmup_steps=30, schedule="linear", label_smoothing=0.0, val_fraction=0.0,
              accelerator="cpu", devices=1, precision="32-true", seed=7, cpu_threads=1)


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # far faster than 2 threads for a model this small
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def spm_model(tmp_path_factory) -> str:
    text = [t[0] for t in FREE + _copy_triples(40)] + [t[2] for t in FREE + _copy_triples(40)]
    prefix = str(tmp_path_factory.mktemp("spm") / "para")
    spm.SentencePieceTrainer.train(sentence_iterator=iter(text), model_prefix=prefix,
                                   vocab_size=120, hard_vocab_limit=False,
                                   character_coverage=1.0, minloglevel=2)
    return prefix + ".model"


@pytest.fixture(scope="module")
def trained(spm_model, tmp_path_factory):
    out = tmp_path_factory.mktemp("ckpt") / "paraphraser"
    config = ParaphraserConfig(**CONFIG, batch_size=32, max_steps=220, copy_oov_rate=0.3,
                               log_every_n_steps=20)
    path = train_paraphraser(FREE * 4 + _copy_triples(40), spm_model, config, out)
    return path, load_paraphraser(path)


def test_checkpoint_directory_layout(trained):
    path, _ = trained
    names = sorted(p.name for p in path.iterdir())
    assert names == ["config.json", "model.safetensors", "spiece.model",
                     "trainer_state.json", "training_args.json"]
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]  # no temp dirs
    args = json.loads((path / "training_args.json").read_text())
    assert args["d_model"] == 64 and args["resolved"]["precision"] == "32-true"
    config = json.loads((path / "config.json").read_text())
    assert config["model_type"] == "qastress-pointer-generator-transformer"


def test_overfits_a_handful_of_triples(trained):
    path, para = trained
    history = json.loads((path / "trainer_state.json").read_text())["log_history"]
    losses = [h["loss"] for h in history if "loss" in h]
    assert losses[-1] < 0.1 * losses[0]
    inputs = [(sug, src) for src, sug, _ in FREE]
    targets = [tgt for _, _, tgt in FREE]
    assert para.generate(inputs, beam_size=4) == targets
    assert para.greedy(inputs) == targets


def test_copies_out_of_vocabulary_suggestions(trained):
    _, para = trained
    tok = para.tokenizer
    assert all(tok.is_oov(word) for word in OOV_WORDS)
    inputs = [(w, src) for w in OOV_WORDS for src, _ in TEMPLATES]
    expected = [tgt.format(w) for w in OOV_WORDS for _, tgt in TEMPLATES]
    got = para.generate(inputs, beam_size=4)
    assert got == expected
    assert all(w in text for w, text in zip([w for w in OOV_WORDS for _ in TEMPLATES], got,
                                            strict=True))


def test_no_suggestion_paraphrase(trained):
    _, para = trained
    sources = [src for src, _ in TEMPLATES]
    assert para.generate([(None, s) for s in sources]) == sources
    assert para.generate([("", s) for s in sources]) == sources


def test_save_load_gives_identical_generations(trained, tmp_path):
    _, para = trained
    inputs = [(w, src) for w in OOV_WORDS[:2] for src, _ in TEMPLATES] + [
        (sug, src) for src, sug, _ in FREE]
    before = para.generate(inputs, beam_size=3)
    before_scores = para.score(inputs, before)
    para.save_pretrained(tmp_path / "again")
    again = load_paraphraser(tmp_path / "again")
    assert again.generate(inputs, beam_size=3) == before
    assert again.score(inputs, before) == before_scores
    for key, value in para.model.state_dict().items():
        assert torch.equal(value, again.model.state_dict()[key]), key


def test_trained_beam_one_is_greedy_and_batches_agree(trained):
    _, para = trained
    inputs = [(w, src) for w in OOV_WORDS for src, _ in TEMPLATES[:2]] + [
        (sug, src) for src, sug, _ in FREE]
    assert para.generate(inputs, beam_size=1) == para.greedy(inputs)
    batched = para.generate(inputs, beam_size=4, batch_size=16)
    assert batched == [para.generate([x], beam_size=4)[0] for x in inputs]


def test_score_prefers_the_copy(trained):
    _, para = trained
    src, tgt = TEMPLATES[0]
    good, bad = para.score([("ßøж", src)] * 2, [tgt.format("ßøж"), tgt.format("book")])
    assert good > bad


def test_seeded_training_is_deterministic_and_records_val_loss(spm_model, tmp_path):
    config = ParaphraserConfig(**CONFIG, batch_size=4, max_steps=12, copy_oov_rate=0.3,
                               log_every_n_steps=4)
    paths = [train_paraphraser(FREE, spm_model, config, tmp_path / f"run{i}",
                               val_triples=FREE[:2]) for i in range(2)]
    first, second = (load_paraphraser(p).model.state_dict() for p in paths)
    assert all(torch.equal(first[k], second[k]) for k in first)
    state = json.loads((paths[0] / "trainer_state.json").read_text())
    assert state["global_step"] == 12 and state["final_val_loss"] is not None
    step_12 = next(h for h in state["log_history"] if h.get("step") == 12 and "loss" in h)
    assert state["final_train_loss"] == pytest.approx(step_12["loss"])
    assert any("val_loss" in h for h in state["log_history"])
    assert torch.get_num_threads() == 1  # cpu_threads is restored after training


def test_whole_word_copy_setting_travels_with_the_checkpoint(spm_model, tmp_path):
    config = ParaphraserConfig(**CONFIG, batch_size=4, max_steps=4, copy_word_pieces=2)
    path = train_paraphraser(FREE, spm_model, config, tmp_path / "whole")
    assert json.loads((path / "config.json").read_text())["copy_word_pieces"] == 2
    para = load_paraphraser(path)
    assert para.tokenizer.copy_word_pieces == 2
    split = next(w for w in ("capital", "company", "founded", "france", "singer")
                 if len([p for p in para.tokenizer.sp.encode(w, out_type=str)
                         if p != "\u2581"]) >= 2)
    enc = para.tokenizer.encode_source(None, f"what is the {split}?")
    assert split in enc.oov_words  # copied whole after reloading, as in training
