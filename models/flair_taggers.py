"""Flair sequence taggers (NER, phrase chunks) for the adversarial suggestions of Gan & Ng (2019).

Two ways to get a tagger, both returning a ``flair.models.SequenceTagger``:

- :func:`load_tagger` by hub name (``"ner-ontonotes-fast"``, ``"chunk-fast"``; used when the
  model is in Flair's cache or the hub can be reached) or by local path (a ``.pt`` file or a
  training directory holding ``final-model.pt``/``best-model.pt``). A hub name that cannot be
  fetched raises :class:`TaggerUnavailableError`, whose message says how to train the offline
  taggers instead.
- :func:`models.flair_training.train_tagger` trains a small tagger offline on a Flair column
  corpus (read with :func:`load_column_corpus`); the model it saves loads with
  :func:`load_tagger`.

This module loads and evaluates taggers (:func:`evaluate_tagger`) and reads column corpora;
:mod:`models.flair_training` trains them.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from models.flair_import import import_flair

if TYPE_CHECKING:  # pragma: no cover
    from flair.models import SequenceTagger

logger = logging.getLogger(__name__)

#: Column layout of the corpora (same as ``tasks.paraphrase.tagging_corpus.COLUMNS``).
DEFAULT_COLUMNS: dict[int, str] = {0: "text", 1: "ner", 2: "chunk"}
MODEL_FILES = ("final-model.pt", "best-model.pt")
_OFFLINE_HINT = """\
Flair's pretrained taggers come from a model hub that this machine cannot reach, and {name!r} \
is not in Flair's local cache ({cache}). Train the small offline taggers on the demo world \
instead and pass their paths:

    from tasks.params_loading import load_params
    from tasks.demo.tagging_sentences import build_demo_tagging_corpus
    from models.flair_training import train_tagger
    params = load_params(profile="demo")
    build_demo_tagging_corpus(params.demo_world, "data/taggers/corpus")
    ner = train_tagger("data/taggers/corpus", "ner", "data/taggers/ner")
    chunk = train_tagger("data/taggers/corpus", "chunk", "data/taggers/chunk")
    # then load_tagger("data/taggers/ner/final-model.pt"), load_tagger("data/taggers/chunk")

(or copy a downloaded Flair model file here and pass its path).
Original error: {error}"""


class TaggerUnavailableError(RuntimeError):
    """A tagger named by hub name or path cannot be loaded (offline, missing file)."""


# -- loading ------------------------------------------------------------------------------------
@contextlib.contextmanager
def _quiet_flair() -> Iterator[None]:
    """Flair logs a one-hot model's whole vocabulary at INFO when it loads: hold that back."""
    flair_log = logging.getLogger("flair")
    level = flair_log.level
    flair_log.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        flair_log.setLevel(level)


@contextlib.contextmanager
def flair_console_quiet() -> Iterator[None]:
    """Inside, Flair's console shows only its warnings; its log files still get everything.

    A training logs its corpus, the model's structure, every few iterations and its dev and
    test reports: ~120 lines per demo tagger on the console, all of them also in the
    ``training.log`` it writes beside the model (a file handler of the same logger, which this
    leaves alone). Flair's own progress bars (``flair.file_utils.Tqdm``: the corpus check and
    each evaluation; carriage-return lines in a run's log, a dozen per demo run) stay off too;
    the training's progress is in ``training.log``."""
    import_flair()
    from flair.file_utils import Tqdm

    consoles = [h for h in logging.getLogger("flair").handlers
                if type(h) is logging.StreamHandler]  # not FileHandler, a subclass
    levels = [h.level for h in consoles]
    for handler in consoles:
        handler.setLevel(max(handler.level, logging.WARNING))
    bars = Tqdm.__dict__["tqdm"]  # the staticmethod object, restored as it was
    Tqdm.tqdm = staticmethod(lambda *args, **kwargs: bars.__func__(
        *args, **{**kwargs, "disable": True}))
    try:
        yield
    finally:
        Tqdm.tqdm = bars
        for handler, level in zip(consoles, levels, strict=True):
            handler.setLevel(level)


def _model_file(path: Path) -> Path:
    if path.is_dir():
        for name in MODEL_FILES:
            if (path / name).is_file():
                return path / name
        raise TaggerUnavailableError(f"{path}: no {' or '.join(MODEL_FILES)} in this directory")
    return path


def _looks_like_path(name: str) -> bool:
    """Paths end in a model suffix, start like a path or have more than one ``/`` (hub ids
    such as ``flair/ner-english`` have one)."""
    return (name.endswith((".pt", ".bin", ".pth")) or name.startswith((".", "/", "~"))
            or name.count("/") > 1)


def load_tagger(name_or_path: str | Path) -> SequenceTagger:
    """A Flair ``SequenceTagger`` from a local file/directory or a hub name.

    Local paths (existing files or directories) are loaded directly and never touch the
    network. Anything else is a hub name (``"ner-ontonotes-fast"``, ``"flair/chunk-english"``),
    loaded from Flair's cache or the hub; when that fails (offline), a
    :class:`TaggerUnavailableError` explains how to train the offline demo taggers. Importing
    ``tasks`` sets ``HF_HUB_OFFLINE=1`` unless it is set: export ``HF_HUB_OFFLINE=0`` to let
    Flair download on a machine with internet.
    """
    import_flair()
    from flair.models import SequenceTagger

    text = str(name_or_path)
    path = Path(text).expanduser()
    if path.exists():
        model_file = _model_file(path)
        try:
            with _quiet_flair():
                return SequenceTagger.load(str(model_file))
        except Exception as exc:  # a corrupt or non-Flair file
            raise TaggerUnavailableError(
                f"{model_file}: not a loadable Flair SequenceTagger ({exc})") from exc
    if isinstance(name_or_path, Path) or _looks_like_path(text):
        raise TaggerUnavailableError(
            f"{text}: no such tagger file or directory; train one with "
            "models.flair_training.train_tagger (see its module docstring)")
    try:
        with _quiet_flair():
            return SequenceTagger.load(text)
    except Exception as exc:
        flair = import_flair()

        raise TaggerUnavailableError(_OFFLINE_HINT.format(
            name=text, cache=Path(flair.cache_root) / "models", error=f"{type(exc).__name__}: "
            f"{exc}")) from exc


def load_column_corpus(corpus_dir: str | Path, columns: dict[int, str] | None = None,
                       max_train_sentences: int | None = None, seed: int = 13) -> Any:
    """A Flair ``ColumnCorpus`` of ``train.txt`` (+ ``dev.txt``, ``test.txt`` when present).

    With ``max_train_sentences``, ``max_train_sentences`` training sentences drawn at random
    (``random.Random(seed)`` over the sentence positions, kept in file order). The draw is made
    on the file's sentence blocks (blank-line separated, as Flair reads them) before Flair
    parses anything, so a quick tagger does not pay for parsing a 40k-sentence file to keep
    400 (measured on the demo corpus: 8.8 s per tagger); the sentences are the ones a full
    parse followed by the same draw would keep (tested).
    """
    import random
    import tempfile

    import_flair()
    from flair.datasets import ColumnCorpus

    corpus_dir = Path(corpus_dir).resolve()
    if not (corpus_dir / "train.txt").is_file():
        raise FileNotFoundError(f"{corpus_dir}: no train.txt (write one with "
                                "tasks.demo.tagging_sentences.build_demo_tagging_corpus)")
    files = {f"{name}_file": str(corpus_dir / f"{name}.txt") for name in ("train", "dev", "test")
             if (corpus_dir / f"{name}.txt").is_file() and (corpus_dir / f"{name}.txt").stat()
             .st_size > 0}
    with tempfile.TemporaryDirectory(prefix="train-sample-") as tmp:
        if max_train_sentences is not None:
            blocks = sentence_blocks(corpus_dir / "train.txt")
            if len(blocks) > max_train_sentences:
                keep = sorted(random.Random(seed).sample(range(len(blocks)),
                                                         max_train_sentences))
                sample = Path(tmp) / "train.txt"
                sample.write_text("".join(blocks[i] + "\n" for i in keep), encoding="utf-8")
                files["train_file"] = str(sample)
        return ColumnCorpus(corpus_dir, columns or DEFAULT_COLUMNS, sample_missing_splits=False,
                            in_memory=True, **files)


def sentence_blocks(path: Path) -> list[str]:
    """The sentences of a column file as text blocks (lines up to a blank line, each block
    ending in a newline); blank runs and a missing final blank line are allowed."""
    blocks: list[str] = []
    current: list[str] = []
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                current.append(line if line.endswith("\n") else line + "\n")
            elif current:
                blocks.append("".join(current))
                current = []
    if current:
        blocks.append("".join(current))
    return blocks


def evaluate_tagger(tagger: SequenceTagger, corpus_file: str | Path,
                    columns: dict[int, str] | None = None) -> float:
    """Span micro-F1 of ``tagger`` on one column file (its own label type)."""
    import_flair()
    from flair.datasets import ColumnDataset

    dataset = ColumnDataset(Path(corpus_file), columns or DEFAULT_COLUMNS, in_memory=True)
    result = tagger.evaluate(dataset, gold_label_type=tagger.label_type, mini_batch_size=64,
                             embedding_storage_mode="none")
    return float(result.main_score)
