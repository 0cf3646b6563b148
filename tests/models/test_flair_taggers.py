"""Offline Flair taggers: training without downloads, save -> load -> same predictions, the
one-hot/character stacking trap, fresh dev scores, hub names offline, accuracy on held-out
demo sentences."""

from __future__ import annotations

import contextlib
import socket
import urllib.request

import pytest

from models.flair_taggers import (
    DEFAULT_COLUMNS,
    TaggerUnavailableError,
    evaluate_tagger,
    load_column_corpus,
    load_tagger,
)
from models.flair_training import TaggerTrainConfig, build_embeddings, train_tagger
from tasks.demo.tagging_sentences import build_demo_tagging_corpus

HELD_OUT = ["Ana Lee was born in Dublin, Ireland on 3 May 1950.",
            "The album The Silent River was released by Capitol Records in 1999.",
            "Orion Engineering is headquartered in Lagos."]


class NetworkAccess(AssertionError):
    """Raised by the guard below: something tried to reach the network."""


@contextlib.contextmanager
def no_network():
    """Make every way out fail loudly: sockets, urllib, Flair's and the hub's downloaders."""
    import flair.file_utils
    import flair.models.sequence_tagger_model as stm
    import huggingface_hub

    def refuse(*args, **kwargs):
        raise NetworkAccess(f"network access attempted: {args[:2]!r}")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(socket.socket, "connect", refuse)
        mp.setattr(socket, "create_connection", refuse)
        mp.setattr(socket, "getaddrinfo", refuse)
        mp.setattr(urllib.request, "urlopen", refuse)
        mp.setattr(flair.file_utils, "cached_path", refuse)
        mp.setattr(flair.file_utils, "hf_download", refuse)
        mp.setattr(stm, "cached_path", refuse)
        mp.setattr(stm, "hf_download", refuse)
        mp.setattr(huggingface_hub, "hf_hub_download", refuse)
        yield


@pytest.fixture(scope="module")
def tiny_corpus(smoke_params, tmp_path_factory):
    out = tmp_path_factory.mktemp("flair_tiny_corpus")
    build_demo_tagging_corpus(smoke_params.demo_world, out, max_train=80, dev_share=0.03,
                              test_share=0.03)
    return out


def _predictions(tagger, texts):
    from flair.data import Sentence

    sentences = [Sentence(t) for t in texts]
    tagger.predict(sentences)
    return [[(s.text, s.get_label(tagger.label_type).value, round(s.score, 5))
             for s in sentence.get_spans(tagger.label_type)] for sentence in sentences]


def test_train_and_load_offline_same_predictions(tiny_corpus, tmp_path):
    config = TaggerTrainConfig(max_epochs=2, hidden_size=16, word_embedding_dim=16,
                               char_embedding_dim=8, char_hidden_size=8)
    with no_network():
        trained = train_tagger(tiny_corpus, "chunk", tmp_path / "chunk", config)
        assert trained.model_path == tmp_path / "chunk" / "final-model.pt"
        assert trained.model_path.is_file() and (tmp_path / "chunk" / "char_dict.pkl").is_file()
        assert {"NP", "VP", "PP"} <= set(trained.labels) <= {"NP", "VP", "PP", "ADJP", "ADVP"}
        before = _predictions(trained.tagger, HELD_OUT)
        by_file = load_tagger(trained.model_path)
        by_dir = load_tagger(tmp_path / "chunk")
        assert _predictions(by_file, HELD_OUT) == before
        assert _predictions(by_dir, HELD_OUT) == before
        # Characters first in the stack: the reloaded stack has the same order.
        names = [type(e).__name__ for e in by_file.embeddings.embeddings]
        assert names == ["CharacterEmbeddings", "OneHotEmbeddings"]
        # embeddings_storage_mode="none": the trainer's last dev score is the final model's
        # (with Flair's default "cpu" the dev sentences keep epoch-1 vectors and it differs).
        assert evaluate_tagger(by_file, tiny_corpus / "dev.txt") == pytest.approx(
            trained.dev_f1, abs=1e-12)
    assert any(label for sentence in before for _, label, _ in sentence)


TINY = dict(max_epochs=2, hidden_size=16, word_embedding_dim=16, char_embedding_dim=8,
            char_hidden_size=8)


def test_training_keeps_flairs_console_to_warnings_and_its_log_file_whole(tiny_corpus,
                                                                           tmp_path, capfd):
    """A console handler of Flair's logger sees no INFO line of a training (nor of the block),
    nor does stderr get Flair's progress bars; its training.log holds them all, and the
    console hears INFO again afterwards (and the bars are Flair's again)."""
    import io
    import logging

    from flair.file_utils import Tqdm

    from models.flair_taggers import flair_console_quiet

    flair_log = logging.getLogger("flair")
    console_text = io.StringIO()
    console = logging.StreamHandler(console_text)
    flair_log.addHandler(console)
    bars = Tqdm.__dict__["tqdm"]
    try:
        capfd.readouterr()
        train_tagger(tiny_corpus, "chunk", tmp_path / "chunk", TaggerTrainConfig(**TINY))
        assert "it/s" not in capfd.readouterr().err  # Flair's tqdm bars would say "it/s"
        assert Tqdm.__dict__["tqdm"] is bars
        with flair_console_quiet():
            flair_log.info("an info line")
            flair_log.warning("a warning line")
        assert console_text.getvalue() == "a warning line\n"
        flair_log.info("info after")
        assert console_text.getvalue().endswith("info after\n")
    finally:
        flair_log.removeHandler(console)
    log_file = (tmp_path / "chunk" / "training.log").read_text(encoding="utf-8")
    assert "epoch 1 - iter" in log_file and "Corpus:" in log_file


def _stop_at_batch(monkeypatch, error: type[BaseException], at: int = 3) -> None:
    """Make the tagger's ``at``-th training loss raise ``error`` (Ctrl-C is KeyboardInterrupt)."""
    from flair.models import SequenceTagger

    real, calls = SequenceTagger.forward_loss, []

    def forward_loss(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == at:
            raise error("stopped by the test")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(SequenceTagger, "forward_loss", forward_loss)


@pytest.mark.parametrize("error", [KeyboardInterrupt, RuntimeError])
def test_a_stopped_training_leaves_the_previous_tagger(tiny_corpus, tmp_path, monkeypatch,
                                                       error):
    """A crash (RuntimeError) or Ctrl-C mid-training: the tagger directory keeps the previous
    complete model and no half-written one appears. Flair itself catches Ctrl-C, saves the
    part-trained model as ``final-model.pt`` and returns normally; train_tagger discards it."""
    out = tmp_path / "chunk"
    first = train_tagger(tiny_corpus, "chunk", out, TaggerTrainConfig(**TINY))
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    _stop_at_batch(monkeypatch, error)
    with pytest.raises((KeyboardInterrupt, RuntimeError)):
        train_tagger(tiny_corpus, "chunk", out, TaggerTrainConfig(**{**TINY, "max_epochs": 3}))
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["chunk"]  # no temporary left behind
    assert load_tagger(first.model_path).label_type == "chunk"


def test_side_by_side_training_equals_one_after_the_other(tiny_corpus, tmp_path):
    """The chunker trained in a spawned process beside the NER tagger: the same losses per
    epoch and F1 as both trained one after the other in this process (each seeds itself)."""
    from tasks.demo.taggers import train_side_by_side

    config = TaggerTrainConfig(max_epochs=2, hidden_size=16, word_embedding_dim=16,
                               char_embedding_dim=8, char_hidden_size=8, threads=1)
    configs = {"ner": config, "chunk": config}
    both = train_side_by_side(tiny_corpus, tmp_path / "both", configs)
    alone = [train_tagger(tiny_corpus, t, tmp_path / "alone" / t, config)
             for t in ("ner", "chunk")]
    assert [t.tag_type for t in both] == ["ner", "chunk"]
    assert both[1].tagger is None and both[1].model_path == tmp_path / "both/chunk/final-model.pt"
    for a, b in zip(both, alone, strict=True):
        assert (a.test_f1, a.dev_f1, a.labels) == (b.test_f1, b.dev_f1, b.labels)

        def losses(path):
            return [line.split("\t")[2:] for line in path.read_text().splitlines()]

        assert losses(a.model_path.parent / "loss.tsv") == losses(b.model_path.parent /
                                                                  "loss.tsv")


def test_sampled_training_sentences_are_those_of_a_full_parse(tiny_corpus, tmp_path):
    """The quick taggers' draw of training sentences is made on the file's blocks before Flair
    parses it; it must keep exactly the sentences that parsing everything and drawing the same
    positions keeps (and leave dev/test whole). The file gets messy blank runs on purpose."""
    import random

    from flair.datasets import ColumnDataset

    messy = tmp_path / "corpus"
    messy.mkdir()
    for name in ("train", "dev", "test"):
        text = (tiny_corpus / f"{name}.txt").read_text(encoding="utf-8")
        if name == "train":
            text = "\n\n" + text.replace("\n\n", "\n \n\n", 7).rstrip("\n")
        (messy / f"{name}.txt").write_text(text, encoding="utf-8")
    full = ColumnDataset(messy / "train.txt", DEFAULT_COLUMNS, in_memory=True)
    keep = sorted(random.Random(5).sample(range(len(full)), 17))
    expected = [full[i].to_tagged_string() for i in keep]

    corpus = load_column_corpus(messy, max_train_sentences=17, seed=5)
    assert [s.to_tagged_string() for s in corpus.train] == expected
    assert len(corpus.dev) == len(ColumnDataset(messy / "dev.txt", DEFAULT_COLUMNS))
    assert len(load_column_corpus(messy, max_train_sentences=10_000).train) == len(full)


def test_one_hot_first_would_reload_in_the_wrong_order(tiny_corpus, tmp_path):
    """Why characters come first: Flair concatenates a token's vectors in sorted name order,
    and a reloaded one-hot embedding loses its stack prefix (``0-one-hot-text`` ->
    ``one-hot-text``), so one-hot-first swaps the input halves after a reload."""
    import torch
    from flair.data import Sentence
    from flair.embeddings import CharacterEmbeddings, OneHotEmbeddings, StackedEmbeddings
    from flair.models import SequenceTagger

    corpus = load_column_corpus(tiny_corpus)
    config = TaggerTrainConfig(word_embedding_dim=6, char_embedding_dim=4, char_hidden_size=2)
    good = build_embeddings(corpus, config, tmp_path / "chars.pkl")
    assert [type(e).__name__ for e in good.embeddings] == ["CharacterEmbeddings",
                                                            "OneHotEmbeddings"]
    chars = CharacterEmbeddings(path_to_char_dict=str(tmp_path / "chars.pkl"),
                                char_embedding_dim=4, hidden_size_char=2)
    words = OneHotEmbeddings.from_corpus(corpus, min_freq=2, embedding_length=6)
    wrong = StackedEmbeddings([words, chars])  # one-hot first: the trap

    def vectors_before_and_after(embeddings, name):
        tagger = SequenceTagger(hidden_size=8, embeddings=embeddings,
                                tag_dictionary=corpus.make_label_dictionary("chunk"),
                                tag_type="chunk", use_crf=False)
        tagger.save(tmp_path / name)
        reloaded = load_tagger(tmp_path / name)
        out = []
        for model in (tagger, reloaded):
            sentence = Sentence(HELD_OUT[0])
            model.embeddings.embed(sentence)
            out.append(sentence[0].get_embedding(model.embeddings.get_names()))
        return out

    before, after = vectors_before_and_after(good, "good.pt")
    assert torch.equal(before, after)
    before, after = vectors_before_and_after(wrong, "wrong.pt")
    assert before.shape == after.shape == (10,) and not torch.equal(before, after)
    assert torch.equal(before[:6], after[-6:])  # the same halves, swapped


def test_hub_names_and_bad_paths_offline(tmp_path):
    with no_network(), pytest.raises(TaggerUnavailableError) as error:
        load_tagger("ner-ontonotes-fast")
    message = str(error.value)
    assert "'ner-ontonotes-fast'" in message and "train_tagger" in message
    assert "build_demo_tagging_corpus" in message
    with pytest.raises(TaggerUnavailableError, match="no such tagger file"):
        load_tagger(tmp_path / "missing" / "final-model.pt")
    with pytest.raises(TaggerUnavailableError, match="no final-model.pt or best-model.pt"):
        load_tagger(tmp_path)
    (tmp_path / "junk.pt").write_bytes(b"not a model")
    with pytest.raises(TaggerUnavailableError, match="not a loadable Flair SequenceTagger"):
        load_tagger(tmp_path / "junk.pt")


def test_demo_taggers_accuracy_on_held_out_sentences(quick_demo_taggers):
    """Held-out sentences name subjects never seen in training (split by subject)."""
    assert quick_demo_taggers.ner.test_f1 >= 0.65, quick_demo_taggers.ner
    assert quick_demo_taggers.chunk.test_f1 >= 0.9, quick_demo_taggers.chunk
    assert set(quick_demo_taggers.ner.labels) >= {"PERSON", "GPE", "ORG", "WORK_OF_ART", "DATE"}
    ner = load_tagger(quick_demo_taggers.ner.model_path)
    [spans] = _predictions(ner, HELD_OUT[:1])
    assert ("Dublin", "GPE") in [(text, label) for text, label, _ in spans]
