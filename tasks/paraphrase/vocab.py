"""The paraphraser's SentencePiece vocabulary (Gan & Ng: 8k pieces), trained on the lower-cased
training triples (sources, targets and the non-empty suggestions).

Tiny data (the smoke profile) cannot fill 8k pieces: training uses ``hard_vocab_limit=False``,
so the vocabulary is as large as the data supports up to the requested size, and the requested
size is raised to the number of distinct characters + the meta pieces when it is below that
(SentencePiece refuses smaller). The model is a plain SentencePiece model with no user-defined
symbols: the paraphraser's tokenizer appends its own specials (``<sep>``, ``<none>``, ...).
The output directory (``spm.model``, ``spm.vocab``, ``manifest.json``) is written atomically.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

import sentencepiece as spm

from tasks.io.atomic import atomic_dir, write_json
from tasks.paraphrase.text import NONE_TOKEN
from tasks.paraphrase.training_data import Triple, read_triples

MODEL_FILE = "spm.model"
_META_PIECES = 3  # <unk>, <s>, </s>


def vocab_sentences(triples: Iterable[Triple]) -> Iterator[str]:
    """The lower-cased texts the vocabulary is trained on, each distinct text once."""
    seen: set[str] = set()
    for triple in triples:
        for text in (triple.source, triple.target, triple.suggestion):
            text = " ".join(text.lower().split())
            if text and text != NONE_TOKEN and text not in seen:
                seen.add(text)
                yield text


def train_sentencepiece(sentences: list[str], vocab_size: int = 8000,
                        model_type: Literal["unigram", "bpe"] = "unigram",
                        seed_size: int = 1_000_000,
                        input_sentence_size: int = 2_000_000,
                        threads: int = 2) -> tuple[bytes, dict[str, Any]]:
    """Train a SentencePiece model in memory; return its bytes and what was asked and got."""
    if not sentences:
        raise ValueError("no sentences to train the vocabulary on")
    chars = {c for s in sentences for c in s if not c.isspace()}
    required = len(chars) + 1 + _META_PIECES  # + the word-boundary piece "▁"
    size = max(vocab_size, required)
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences), model_writer=model, vocab_size=size,
        model_type=model_type, hard_vocab_limit=False, character_coverage=1.0,
        seed_sentencepiece_size=seed_size, input_sentence_size=input_sentence_size,
        shuffle_input_sentence=True, num_threads=threads, minloglevel=2,
    )
    proto = model.getvalue()
    actual = spm.SentencePieceProcessor(model_proto=proto).get_piece_size()
    info = {"requested_vocab_size": vocab_size, "trained_vocab_size": size,
            "pieces": actual, "model_type": model_type, "sentences": len(sentences),
            "characters": len(chars)}
    return proto, info


def train_vocab(triples_path: Path, vocab_dir: Path, vocab_size: int = 8000,
                model_type: Literal["unigram", "bpe"] = "unigram",
                threads: int = 2) -> dict[str, Any]:
    """Train the vocabulary on the triples of ``triples_path``; write ``vocab_dir``.

    Returns the manifest: requested and actual sizes, the number of training sentences.
    """
    sentences = list(vocab_sentences(read_triples(triples_path)))
    proto, info = train_sentencepiece(sentences, vocab_size, model_type, threads=threads)
    sp = spm.SentencePieceProcessor(model_proto=proto)
    with atomic_dir(vocab_dir) as tmp:
        (tmp / MODEL_FILE).write_bytes(proto)
        (tmp / "spm.vocab").write_text(
            "".join(f"{sp.id_to_piece(i)}\t{sp.get_score(i)}\n"
                    for i in range(sp.get_piece_size())), encoding="utf-8")
        write_json(tmp / "manifest.json", {**info, "source": str(triples_path)}, indent=2)
    return info


def vocab_model_path(vocab_dir: Path) -> Path:
    """The SentencePiece model file of a vocabulary directory."""
    return Path(vocab_dir) / MODEL_FILE
