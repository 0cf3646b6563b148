"""The trainers' AdamW (models/optim.py): weight-decay groups, torch's fused kernel where it can
run, the default one under Lightning's mixed precision (fp16 and bf16), the same update either
way."""

from __future__ import annotations

import pytest
import torch

from models.optim import adamw, bert_no_decay, can_fuse, decay_groups


class _Tiny(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = torch.nn.Embedding(50, 8)
        self.dense = torch.nn.Linear(8, 8)
        self.LayerNorm = torch.nn.LayerNorm(8)
        self.out = torch.nn.Linear(8, 3)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.out(self.LayerNorm(torch.tanh(self.dense(self.embed(ids)))).mean(1))


def _names(model: torch.nn.Module, group: dict) -> list[str]:
    ids = {id(p) for p in group["params"]}
    return [n for n, p in model.named_parameters() if id(p) in ids]


def test_decay_groups_follow_berts_rule_and_skip_frozen_parameters():
    model = _Tiny()
    model.out.weight.requires_grad_(False)
    decay, plain = decay_groups(model.named_parameters(), 0.01)
    assert (decay["weight_decay"], plain["weight_decay"]) == (0.01, 0.0)
    assert _names(model, decay) == ["embed.weight", "dense.weight"]
    assert _names(model, plain) == ["dense.bias", "LayerNorm.weight", "LayerNorm.bias",
                                    "out.bias"]
    custom = decay_groups(model.named_parameters(), 0.1,
                          no_decay=lambda n, p: bert_no_decay(n, p) or n.startswith("embed"))
    assert _names(model, custom[0]) == ["dense.weight"]


def test_fused_on_cpu_but_not_under_lightnings_mixed_precision():
    groups = decay_groups(_Tiny().named_parameters(), 0.0)
    assert can_fuse(groups) and can_fuse(groups, "32-true") and can_fuse(groups, "32")
    for mixed in ("16-mixed", "16", "bf16-mixed", "bf16", "auto"):  # auto may become bf16
        assert not can_fuse(groups, mixed), mixed
    assert not can_fuse([{"params": []}])
    assert adamw(groups, lr=1e-3).defaults["fused"] is True
    plain = adamw(groups, lr=1e-3, precision="16-mixed", betas=(0.9, 0.98))
    assert not plain.defaults["fused"] and plain.defaults["betas"] == (0.9, 0.98)


def test_the_fused_update_is_the_for_loop_update():
    fused_model, loop_model = _Tiny(), _Tiny()
    fused = adamw(decay_groups(fused_model.named_parameters(), 0.01), lr=1e-2)
    loop = torch.optim.AdamW(decay_groups(loop_model.named_parameters(), 0.01), lr=1e-2,
                             foreach=False)
    ids = torch.randint(0, 50, (4, 6), generator=torch.Generator().manual_seed(1))
    labels = torch.tensor([0, 1, 2, 1])
    for model, optimizer in ((fused_model, fused), (loop_model, loop)):
        for _ in range(5):
            torch.nn.functional.cross_entropy(model(ids), labels).backward()
            optimizer.step()
            optimizer.zero_grad()
    start = torch.cat([p.detach().flatten() for p in _Tiny().parameters()])
    a = torch.cat([p.detach().flatten() for p in fused_model.parameters()])
    b = torch.cat([p.detach().flatten() for p in loop_model.parameters()])
    assert float((a - start).abs().max()) > 1e-2  # the weights did move
    torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


def _retriever(tiny_bert, tiny_config):
    from models.retriever.module import RetrieverModule
    from models.retriever.network import BiEncoder

    return RetrieverModule(BiEncoder.from_pretrained(tiny_bert), tiny_config(max_steps=10))


def _mlm(tiny_bert, tiny_config):
    from transformers import AutoTokenizer

    from models.mlm.pretrain import MlmModule, build_model
    from tasks.mlm_config import MlmConfig

    config = MlmConfig(layers=1, hidden=32, heads=2, intermediate=64, max_length=32,
                       max_steps=10, accelerator="cpu")
    return MlmModule(build_model(config, AutoTokenizer.from_pretrained(tiny_bert)), config)


def _reader(tiny_bert, tiny_config):
    from models.reader.api import load_qa_model
    from models.reader.module import ReaderModule
    from tasks.reader_config import ReaderConfig

    return ReaderModule(load_qa_model(tiny_bert)[0], ReaderConfig(max_steps=10))


def _paraphraser(tiny_bert, tiny_config):
    from models.paraphraser.config import ModelConfig, ParaphraserConfig
    from models.paraphraser.module import ParaphraserModule

    model = ModelConfig(spm_vocab_size=40, vocab_size=46, d_model=16, heads=2, encoder_layers=1,
                        decoder_layers=1, ff=32, dropout=0.0, max_len=16, lowercase=True,
                        pad_id=0, bos_id=1, eos_id=2, sep_id=40, none_id=41, unk_id=3)
    return ParaphraserModule(model, ParaphraserConfig(max_steps=10))


def _attach(module, precision: str = "32-true"):
    """``module`` attached to a CPU Trainer of ``precision`` (what ``fit`` does first)."""
    import pytorch_lightning as pl

    module.trainer = pl.Trainer(accelerator="cpu", devices=1, precision=precision,
                                logger=False, enable_checkpointing=False,
                                enable_progress_bar=False, enable_model_summary=False)
    return module


TRAINERS = pytest.mark.parametrize("build", [_retriever, _mlm, _reader, _paraphraser],
                                   ids=["dpr", "mlm", "reader", "paraphraser"])


@TRAINERS
def test_every_trainer_steps_with_the_fused_adamw_over_all_its_trainable_weights(
        build, tiny_bert, tiny_config):
    module = _attach(build(tiny_bert, tiny_config))  # configured "auto", resolved 32-true
    optimizer = module.configure_optimizers()["optimizer"]
    assert isinstance(optimizer, torch.optim.AdamW) and optimizer.defaults["fused"] is True
    held = [p for group in optimizer.param_groups for p in group["params"]]
    trainable = [p for p in module.parameters() if p.requires_grad]
    assert len(held) == len(trainable) and {id(p) for p in held} == {id(p) for p in trainable}
    assert optimizer.param_groups[1]["weight_decay"] == 0.0


@TRAINERS
def test_under_bf16_mixed_every_trainer_clips_with_an_optimizer_lightning_accepts(
        build, tiny_bert, tiny_config):
    # Lightning's mixed-precision plugin raises "does not allow for gradient clipping" for a
    # fused optimizer, bf16 included: a GPU's default precision (auto -> bf16-mixed) stopped
    # every trainer before models/optim.py left bf16 unfused
    module = _attach(build(tiny_bert, tiny_config), "bf16-mixed")
    optimizer = module.configure_optimizers()["optimizer"]
    assert not optimizer.defaults["fused"]
    module.trainer.precision_plugin.clip_gradients(optimizer, clip_val=2.0)
    fused = adamw(decay_groups(module.named_parameters(), 0.0), lr=1e-3)  # the old optimizer
    with pytest.raises(RuntimeError, match="gradient clipping"):
        module.trainer.precision_plugin.clip_gradients(fused, clip_val=2.0)


def test_onlyq_leaves_the_frozen_passage_encoder_out_of_the_fused_step(tiny_bert, tiny_config):
    from models.retriever.module import RetrieverModule
    from models.retriever.network import BiEncoder

    module = _attach(RetrieverModule(BiEncoder.from_pretrained(tiny_bert, freeze="onlyQ"),
                                     tiny_config(max_steps=10)))
    optimizer = module.configure_optimizers()["optimizer"]
    held = {id(p) for group in optimizer.param_groups for p in group["params"]}
    assert optimizer.defaults["fused"] is True
    assert held == {id(p) for p in module.model.question_model.parameters()}
