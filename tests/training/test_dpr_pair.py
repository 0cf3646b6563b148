"""`qastress dpr-pair`: two released DPR checkpoints saved as one retriever directory, which
encodes as they do and which an onlyQ fine-tune leaves searchable by their passage index."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from flows.cli import app
from models.retriever.export import assemble_dpr_pair
from tasks.retrieval.encoders import encode_questions, resolve_encoder_spec
from tasks.retrieval.frozen_index import check_frozen_passage_encoder
from tasks.training.finetune import finetune
from tasks.training.retriever import encoder_spec

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "retrieval"))
from dense_testkit import tiny_dpr  # noqa: E402


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> tuple[Path, Path]:
    """A question encoder and a context encoder in two directories of their own, as two hub
    snapshots are."""
    root = tmp_path_factory.mktemp("hub")
    question, _ = tiny_dpr(root / "a", seed=0)
    _, ctx = tiny_dpr(root / "b", seed=1)
    return question, ctx


def _vectors(spec, texts):
    return encode_questions(spec, texts, [str(i) for i in range(len(texts))],
                            device="cpu").vectors


def test_the_pair_encodes_as_its_sources_and_survives_an_onlyq_fine_tune(released, tmp_path,
                                                                          tiny_config):
    from tasks.retrieval.encoders import load_encoder

    question, ctx = released
    pair = assemble_dpr_pair(question, ctx, tmp_path / "pair", max_length=32)
    assert sorted(p.name for p in pair.iterdir()) == ["ctx_encoder", "question_encoder",
                                                      "training_args.json"]
    assert (pair / "ctx_encoder" / "model.safetensors").is_file()
    sources = resolve_encoder_spec(str(question), str(ctx), max_length=32, normalize=False)
    assembled = encoder_spec(pair)
    assert (assembled.kind, assembled.max_length) == ("dpr", 32)
    texts = ["where was ada born", "oslo is a city in norway"]
    np.testing.assert_array_equal(_vectors(assembled, texts), _vectors(sources, texts))
    titles, passages = ["Ada", "Bo"], ["ada was born in oslo", "bo lives in lima"]
    np.testing.assert_array_equal(load_encoder(assembled, "cpu").encode_passages(titles, passages),
                                  load_encoder(sources, "cpu").encode_passages(titles, passages))

    train = tmp_path / "P19.train.json"
    train.write_text(json.dumps([
        {"dataset": "P19", "question": f"where was person{i} born", "answers": ["Oslo"],
         "positive_ctxs": [{"title": f"P{i}", "text": f"person{i} was born in oslo",
                            "passage_id": str(i)}], "negative_ctxs": [],
         "hard_negative_ctxs": []} for i in range(8)]), encoding="utf-8")
    finetune({"P19": [train]}, pair, tmp_path / "tuned", str(tmp_path / "ckpt"),
             tiny_config(max_steps=2, freeze="onlyQ"))
    check_frozen_passage_encoder(encoder_spec(tmp_path / "tuned"), assembled)  # no error


def test_checkpoints_that_are_not_dpr_are_refused(released, tiny_bert, tmp_path):
    question, ctx = released
    bert = tiny_bert
    with pytest.raises(ValueError, match=r"bert: expected a DPRContextEncoder checkpoint "
                                         r"\(model_type 'dpr'\), found model_type 'bert'"):
        assemble_dpr_pair(question, bert, tmp_path / "pair")
    with pytest.raises(ValueError, match="expected a DPRQuestionEncoder checkpoint"):
        assemble_dpr_pair(ctx, ctx, tmp_path / "pair")  # the sides swapped
    other_vocab = shutil.copytree(ctx, tmp_path / "ctx-other-vocab")
    vocab = [line for line in (ctx / "vocab.txt").read_text(encoding="utf-8").splitlines()]
    for name in ("tokenizer.json", "vocab.txt"):
        (other_vocab / name).unlink()
    (other_vocab / "vocab.txt").write_text("\n".join(vocab[:-1] + ["qastressword"]) + "\n",
                                           encoding="utf-8")
    with pytest.raises(ValueError, match="have different vocabularies"):
        assemble_dpr_pair(question, other_vocab, tmp_path / "pair")
    assert not (tmp_path / "pair").exists()
    result = CliRunner().invoke(app, ["dpr-pair", str(question), str(bert),
                                      str(tmp_path / "pair")])
    assert result.exit_code == 2 and "expected a DPRContextEncoder" in result.stderr
    result = CliRunner().invoke(app, ["dpr-pair", str(question), str(ctx),
                                      str(tmp_path / "pair")])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == str(tmp_path / "pair")
    shutil.rmtree(tmp_path / "pair")
