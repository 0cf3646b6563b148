"""Training the small offline Flair taggers (NER, phrase chunks); :mod:`models.flair_taggers`
loads and evaluates them.

- :func:`train_tagger` trains a small tagger offline on a Flair column corpus (as written by
  :mod:`tasks.paraphrase.tagging_corpus`): a BiLSTM(-CRF) over a stack of character embeddings and
  one-hot word embeddings, neither of which needs a download. The model is saved like any Flair
  model (``final-model.pt``) and loads with :func:`models.flair_taggers.load_tagger`.
- :func:`tasks.demo.taggers.train_demo_taggers` does both steps for a demo world: the gold
  corpus, then the NER and chunk taggers. The defaults of :class:`TaggerTrainConfig` are for the
  demo profile; :data:`QUICK_CONFIGS` train in seconds (tests, smoke).

Flair 0.15.1 traps handled here (each has a test):

- ``CharacterEmbeddings()`` without ``path_to_char_dict`` downloads Flair's common-character
  list; we build the character dictionary from the corpus (saved as ``char_dict.pkl``).
- Trainable embeddings with the trainer's default ``embeddings_storage_mode="cpu"`` keep the
  first epoch's vectors on the dev sentences, so dev scores go stale; we train with ``"none"``.
- A token's vectors are concatenated in the sorted order of the embedding names. The stack
  renames its members ``0-...``, ``1-...`` but a reloaded ``OneHotEmbeddings`` is named
  ``one-hot-text`` again, so with one-hot first the reloaded model would read its input in the
  wrong order. Character embeddings therefore come first (``0-Char``, then ``one-hot-text``
  sorts after it both before and after a reload).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from models.flair_import import import_flair
from models.flair_taggers import flair_console_quiet, load_column_corpus
from tasks.config import Section
from tasks.io.atomic import atomic_dir, write_json


class TaggerTrainConfig(Section):
    """A small BiLSTM-CRF tagger over character + one-hot word embeddings (no downloads)."""

    seed: int = 13
    word_embedding_dim: int = Field(64, ge=1)
    min_word_freq: int = Field(2, ge=1, description="rarer training words map to <unk>")
    char_embedding_dim: int = Field(25, ge=1)
    char_hidden_size: int = Field(25, ge=1)
    hidden_size: int = Field(64, ge=1)
    rnn_layers: int = Field(1, ge=1)
    use_crf: bool = True
    dropout: float = Field(0.0, ge=0.0, lt=1.0)
    word_dropout: float = Field(0.05, ge=0.0, lt=1.0)
    locked_dropout: float = Field(0.0, ge=0.0, lt=1.0)
    optimizer: Literal["sgd", "adam"] = "adam"
    learning_rate: float = Field(0.01, gt=0.0)
    mini_batch_size: int = Field(32, ge=1)
    max_epochs: int = Field(8, ge=1)
    patience: int = Field(3, ge=0)
    max_train_sentences: int | None = Field(
        2000, ge=1, description="train on a seeded sample of this many sentences (None: all)")
    threads: int | None = Field(1, ge=1, description="torch CPU threads while training (small "
                                "LSTMs are fastest on one); None: leave torch's setting")


@dataclass(frozen=True)
class TrainedTagger:
    """Where a trained tagger was saved and how it scored (micro F1 over spans)."""

    model_path: Path
    tag_type: str
    test_f1: float | None
    dev_f1: float | None
    labels: tuple[str, ...]
    #: The trained model in memory (``None`` when the result was read back from disk).
    tagger: Any = field(default=None, repr=False, compare=False)


# -- training -----------------------------------------------------------------------------------
def _char_dictionary(corpus: Any) -> Any:
    import_flair()
    from flair.data import Dictionary

    chars: dict[str, int] = {}
    for sentence in corpus.train:
        for token in sentence:
            for ch in token.text:
                chars[ch] = chars.get(ch, 0) + 1
    dictionary = Dictionary(add_unk=True)
    for ch in sorted(chars, key=lambda c: (-chars[c], c)):
        dictionary.add_item(ch)
    return dictionary


def build_embeddings(corpus: Any, config: TaggerTrainConfig, char_dict_path: Path) -> Any:
    """Character embeddings FIRST, then one-hot word embeddings (see the module docstring)."""
    import_flair()
    from flair.embeddings import CharacterEmbeddings, OneHotEmbeddings, StackedEmbeddings

    char_dictionary = _char_dictionary(corpus)
    char_dictionary.save(char_dict_path)
    characters = CharacterEmbeddings(path_to_char_dict=str(char_dict_path),
                                     char_embedding_dim=config.char_embedding_dim,
                                     hidden_size_char=config.char_hidden_size)
    words = OneHotEmbeddings.from_corpus(corpus, min_freq=config.min_word_freq,
                                         embedding_length=config.word_embedding_dim)
    return StackedEmbeddings([characters, words])


def train_tagger(corpus_dir: str | Path, tag_type: str, out_dir: str | Path,
                 config: TaggerTrainConfig | None = None,
                 columns: dict[int, str] | None = None) -> TrainedTagger:
    """Train a small Flair tagger for ``tag_type`` (``"ner"`` or ``"chunk"``) offline.

    Writes ``out_dir/final-model.pt`` (plus Flair's ``training.log``/``loss.tsv``, the
    character dictionary ``char_dict.pkl`` and ``scores.json``) and returns the path and span
    micro-F1 on dev/test. Nothing is downloaded.

    The directory is built under a temporary name and moved onto ``out_dir`` only when
    training ends normally (:func:`tasks.io.atomic.atomic_dir`): a crash or kill leaves the
    previous ``out_dir`` (or none), never a half-written model. Flair catches Ctrl-C, saves
    the part-trained model and returns as if done; here an interrupted training raises
    :class:`KeyboardInterrupt` instead, so its model is discarded, not taken for a trained one.
    """
    from models.threads import torch_threads

    config = config or TaggerTrainConfig()
    out_dir = Path(out_dir)
    with torch_threads(config.threads), warnings.catch_warnings(), atomic_dir(out_dir) as tmp, \
            flair_console_quiet():
        # Flair 0.15.1 builds a deprecated CUDA GradScaler
        warnings.filterwarnings("ignore", message=".*GradScaler", category=FutureWarning)
        trained = _train(corpus_dir, tag_type, Path(tmp), config, columns)
    return replace(trained, model_path=out_dir / trained.model_path.name)


def _interrupt_recorder() -> Any:
    """A Flair trainer plugin that notes Flair's ``training_interrupt`` event (Ctrl-C)."""
    import_flair()
    from flair.trainers.plugins import TrainerPlugin

    class InterruptRecorder(TrainerPlugin):
        interrupted = False

        @TrainerPlugin.hook
        def training_interrupt(self, **kw: Any) -> None:
            self.interrupted = True

    return InterruptRecorder()


def _train(corpus_dir: str | Path, tag_type: str, out_dir: Path, config: TaggerTrainConfig,
           columns: dict[int, str] | None) -> TrainedTagger:
    import torch

    flair = import_flair()
    from flair.models import SequenceTagger
    from flair.trainers import ModelTrainer
    from flair.trainers.plugins import MetricHistoryPlugin

    flair.set_seed(config.seed)
    corpus = load_column_corpus(corpus_dir, columns, config.max_train_sentences, config.seed)
    label_dictionary = corpus.make_label_dictionary(tag_type, add_unk=False)
    if len(label_dictionary) == 0:
        raise ValueError(f"{corpus_dir}: no {tag_type!r} labels in the training split")
    # Labels only dev/test have would crash Flair's evaluation: know them (never predicted).
    extra = {span.get_label(tag_type).value for split in (corpus.dev, corpus.test)
             if split is not None for sentence in split for span in sentence.get_spans(tag_type)}
    for label in sorted(extra - set(label_dictionary.get_items())):
        label_dictionary.add_item(label)
    embeddings = build_embeddings(corpus, config, out_dir / "char_dict.pkl")
    tagger = SequenceTagger(
        hidden_size=config.hidden_size, embeddings=embeddings, tag_dictionary=label_dictionary,
        tag_type=tag_type, use_crf=config.use_crf, rnn_layers=config.rnn_layers,
        dropout=config.dropout, word_dropout=config.word_dropout,
        locked_dropout=config.locked_dropout)
    optimizer = torch.optim.Adam if config.optimizer == "adam" else torch.optim.SGD
    interrupt = _interrupt_recorder()
    result = ModelTrainer(tagger, corpus).train(
        out_dir, learning_rate=config.learning_rate, mini_batch_size=config.mini_batch_size,
        max_epochs=config.max_epochs, optimizer=optimizer, patience=config.patience,
        embeddings_storage_mode="none", use_final_model_for_eval=True, save_final_model=True,
        create_file_logs=True, create_loss_file=True, shuffle=True,
        plugins=[MetricHistoryPlugin(), interrupt])
    if interrupt.interrupted:
        raise KeyboardInterrupt(f"training of the {tag_type} tagger was interrupted: its "
                                "part-trained model is discarded")
    model_path = out_dir / "final-model.pt"
    dev_history = result.get("dev_score_history") or []
    trained = TrainedTagger(
        model_path=model_path, tag_type=tag_type,
        test_f1=float(result["test_score"]) if corpus.test is not None else None,
        dev_f1=float(dev_history[-1]) if dev_history else None,
        labels=tuple(label_dictionary.get_items()), tagger=tagger)
    write_json(out_dir / "scores.json", {
        "tag_type": tag_type, "test_micro_f1": trained.test_f1, "dev_micro_f1": trained.dev_f1,
        "labels": list(trained.labels), "train_sentences": len(corpus.train),
        "config": config.model_dump(mode="json"),
    }, indent=2)
    return trained


# -- the offline demo taggers -------------------------------------------------------------------
#: Seconds-scale settings (tests, the smoke profile): a few hundred sentences, a few epochs.
QUICK_CONFIGS: dict[str, TaggerTrainConfig] = {
    "ner": TaggerTrainConfig(max_epochs=4, max_train_sentences=400, mini_batch_size=16,
                             hidden_size=48, learning_rate=0.02),
    "chunk": TaggerTrainConfig(max_epochs=3, max_train_sentences=300, mini_batch_size=16,
                               hidden_size=48, learning_rate=0.02),
}
