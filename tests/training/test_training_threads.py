"""Retriever training gives the same weights whatever torch thread count the caller had set
(``cpu_threads: None`` pins the machine's count): on a 2-core CPU one and two threads
otherwise give weights that differ in the last bits (backward reductions)."""

from __future__ import annotations

from pathlib import Path

import torch

from models.threads import torch_threads


def _weights(out_dir: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(Path(out_dir).rglob("*.safetensors")))


def test_retriever_weights_do_not_depend_on_the_callers_threads(tiny_bert, tiny_train_json,
                                                                  tiny_config, tmp_path):
    from models.retriever import load_samples, train_retriever

    samples = load_samples([tiny_train_json], 1, 0)
    config = tiny_config(cpu_threads=None, max_steps=6)
    weights = []
    for caller in (1, 2):
        with torch_threads(caller):
            out = tmp_path / f"caller-{caller}"
            train_retriever(samples, tiny_bert, config, out, tmp_path / f"ckpt-{caller}")
            assert torch.get_num_threads() == caller
        weights.append(_weights(out))
    assert weights[0] and weights[0] == weights[1]
