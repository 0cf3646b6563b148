"""Train a tiny random BERT reader on a synthetic SQuAD-style set (seconds); it must beat a
random-span baseline computed here by a wide margin; save -> load gives identical predictions
and the checkpoint loads in the plain transformers pipeline."""

from __future__ import annotations

import json
import random

import pytest
import torch
from reader_synthetic import synthetic_examples

from models.reader import ReaderConfig, load_reader, train_reader
from tasks.evaluation.squad_metrics import evaluate_squad

CONFIG = ReaderConfig(max_length=96, doc_stride=16, max_query_length=24, batch_size=32,
                      max_steps=90, max_epochs=None, lr=4e-3, warmup_ratio=0.05, seed=1,
                      accelerator="cpu", precision="32-true", cpu_threads=1, n_best=5)


@pytest.fixture(scope="module")
def trained(tiny_bert, tmp_path_factory):
    out = tmp_path_factory.mktemp("reader") / "reader"
    train_reader(synthetic_examples(120, 1), CONFIG, out, tiny_bert)
    return out


def _gold(examples):
    return [(e.id, [a.text for a in e.answers]) for e in examples]


def random_span_baseline(examples, seed: int = 0) -> dict[str, str]:
    """A span of 1-3 words at a random position of the context."""
    rng = random.Random(seed)
    out = {}
    for e in examples:
        words = e.context.split()
        i = rng.randrange(len(words))
        out[e.id] = " ".join(words[i : i + rng.randint(1, 3)])
    return out


def test_trained_reader_beats_random_spans(trained):
    test = synthetic_examples(30, 2)
    reader = load_reader(trained)
    ours = evaluate_squad(_gold(test), reader.answers(test))
    baseline = evaluate_squad(_gold(test), random_span_baseline(test))
    print(f'trained {ours}; random spans {baseline}')
    assert ours.n_missing == 0
    assert ours.f1 >= baseline.f1 + 15 and ours.f1 >= 3 * baseline.f1, (ours, baseline)
    assert ours.exact_match >= baseline.exact_match + 10, (ours, baseline)


def test_checkpoint_layout_and_records(trained):
    names = {p.name for p in trained.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "reader_config.json",
            "training_args.json", "trainer_state.json"} <= names
    state = json.loads((trained / "trainer_state.json").read_text())
    assert state["global_step"] == CONFIG.max_steps
    history = state["log_history"]
    assert history[-1]["loss"] < history[0]["loss"]
    window = json.loads((trained / "reader_config.json").read_text())
    assert window["max_length"] == 96 and window["doc_stride"] == 16


def test_save_load_gives_identical_predictions(trained, tmp_path):
    test = synthetic_examples(10, 3)
    first = load_reader(trained)
    again = load_reader(first.save_pretrained(tmp_path / "copy"))
    a, b = first.predict(test, batch_size=7), again.predict(test, batch_size=7)
    assert [(p.text, p.start, p.score, p.n_best) for p in a] == \
           [(p.text, p.start, p.score, p.n_best) for p in b]
    # batch size changes padding only: the same answers
    assert [p.text for p in first.predict(test, batch_size=64)] == [p.text for p in a]


def test_checkpoint_loads_in_the_transformers_pipeline(trained):
    from transformers import pipeline

    test = synthetic_examples(4, 4)
    qa = pipeline("question-answering", model=str(trained), tokenizer=str(trained),
                  device=-1)
    ours = load_reader(trained).predict(test)
    for e, p in zip(test, ours, strict=True):
        out = qa(question=e.question, context=e.context, max_seq_len=96, doc_stride=16)
        assert isinstance(out["answer"], str)
        assert e.context[out["start"]:out["end"]] == out["answer"]
        assert e.context[p.start:p.end] == p.text


def test_training_threads_are_the_machines_not_the_callers(tiny_bert, tmp_path, monkeypatch):
    """With ``cpu_threads: None`` the reader trains on the machine's thread count whatever the
    caller set (the weights round differently with another count), and the caller's count is
    restored afterwards."""
    from models.reader.module import ReaderModule
    from models.threads import machine_cpu_threads

    # The machine's count, fixed at 2 whatever this worker's environment says (some tests
    # beside this one run with OMP_NUM_THREADS=1), so that it differs from the caller's 1.
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    seen = []
    step = ReaderModule.training_step

    def counting_step(self, batch, batch_idx):
        seen.append(torch.get_num_threads())
        return step(self, batch, batch_idx)

    monkeypatch.setattr(ReaderModule, "training_step", counting_step)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        train_reader(synthetic_examples(8, 4), CONFIG.model_copy(
            update={"cpu_threads": None, "max_steps": 2, "batch_size": 4}), tmp_path / "r",
            tiny_bert)
        assert seen and set(seen) == {machine_cpu_threads()}
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_training_refuses_unanswered_questions(tiny_bert, tmp_path):
    from models.reader.features import QAExample

    with pytest.raises(ValueError, match="without an answer"):
        train_reader([QAExample("a", "q?", "ctx", ())], CONFIG, tmp_path / "r", tiny_bert)
    assert torch.get_num_threads() >= 1


def test_hidden_dropout_replaces_the_checkpoints_own(tiny_bert):
    from models.reader.api import load_qa_model

    kept, _ = load_qa_model(tiny_bert)  # the tiny checkpoint has no dropout
    set_, _ = load_qa_model(tiny_bert, hidden_dropout=0.3)
    assert kept.config.hidden_dropout_prob == 0.0
    assert set_.config.hidden_dropout_prob == 0.3
    assert set_.config.attention_probs_dropout_prob == 0.0  # attention dropout is left alone
    hidden = [m.p for name, m in set_.named_modules()
              if isinstance(m, torch.nn.Dropout) and "attention.self" not in name]
    assert hidden and all(p == 0.3 for p in hidden)
    with pytest.raises(ValueError, match="hidden_dropout"):
        ReaderConfig(hidden_dropout=1.0)


def test_lr_schedules_after_warm_up():
    from models.reader.module import lr_factor

    old_linear = [min((s + 1) / 10, 1.0) if s < 10 else max(0.0, (100 - s) / 90)
                  for s in range(101)]
    assert [lr_factor("linear", 10, 100)(s) for s in range(101)] == old_linear  # bit for bit
    constant = lr_factor("constant", 10, 100, min_ratio=0.3)
    assert [constant(s) for s in (0, 9, 10, 55, 100)] == [0.1, 1.0, 1.0, 1.0, 1.0]
    cosine = lr_factor("cosine", 10, 100, min_ratio=0.3)
    assert cosine(10) == 1.0 and cosine(55) == pytest.approx(0.65) and cosine(100) == 0.3
    assert cosine(200) == 0.3  # past the planned steps it stays at the floor
    values = [cosine(s) for s in range(10, 101)]
    assert values == sorted(values, reverse=True)
    assert lr_factor("linear", 10, 100, min_ratio=0.3)(100) == pytest.approx(0.3)
    with pytest.raises(ValueError, match="unknown lr_schedule 'step'"):
        lr_factor("step", 10, 100)
    with pytest.raises(ValueError, match="lr_schedule"):
        ReaderConfig(lr_schedule="step")


def test_training_follows_the_configured_schedule(tiny_bert, tmp_path):
    from models.reader.module import lr_factor

    config = CONFIG.model_copy(update={"max_steps": 20, "warmup_ratio": 0.1, "lr": 1e-3,
                                       "lr_schedule": "cosine", "min_lr_ratio": 0.25,
                                       "log_every_n_steps": 1, "batch_size": 8})
    out = train_reader(synthetic_examples(40, 4), config, tmp_path / "reader", tiny_bert)
    lrs = [h["lr"] for h in json.loads((out / "trainer_state.json").read_text())["log_history"]
           if "lr" in h]
    factor = lr_factor("cosine", 2, 20, min_ratio=0.25)  # warm-up: 10 % of 20 steps
    assert lrs == pytest.approx([1e-3 * factor(step) for step in range(20)])
    assert lrs[1] == pytest.approx(1e-3) and lrs[-1] > 0.25e-3


@pytest.mark.parametrize("length", [{"max_steps": 7}, {"max_steps": None, "max_epochs": 2}],
                         ids=["max-steps", "max-epochs"])
def test_final_train_loss_is_the_last_steps_when_logging_is_sparse(tiny_bert, tmp_path, length):
    """The loss is logged to Lightning on the recorded steps and the last one only: the final
    train loss is still the last step's (28 questions in batches of 8: 4 steps an epoch)."""
    runs = {}
    for every in (1, 3):
        config = CONFIG.model_copy(update={**length, "log_every_n_steps": every,
                                           "batch_size": 8})
        out = train_reader(synthetic_examples(28, 4), config, tmp_path / f"every{every}",
                           tiny_bert)
        runs[every] = json.loads((out / "trainer_state.json").read_text())
    last = runs[1]["log_history"][-1]
    assert last["step"] == runs[3]["global_step"] and last["step"] not in (1, 3, 6)
    assert runs[3]["final_train_loss"] == pytest.approx(last["loss"], abs=1e-6)
    assert runs[1]["final_train_loss"] == pytest.approx(last["loss"], abs=1e-6)


def test_the_optimizer_is_fused_adamw_with_the_same_update(tiny_bert):
    import copy

    from models.reader.api import load_qa_model
    from models.reader.module import ReaderModule

    model, _ = load_qa_model(tiny_bert)
    config = CONFIG.model_copy(update={"max_steps": 10, "lr": 1e-2})
    module = ReaderModule(model, config)
    fused = module.configure_optimizers()["optimizer"]
    assert isinstance(fused, torch.optim.AdamW) and fused.defaults["fused"] is True
    assert [g["weight_decay"] for g in fused.param_groups] == [config.weight_decay, 0.0]
    twin = copy.deepcopy(module.model)  # the same groups with the for-loop implementation
    loop = torch.optim.AdamW(
        [{"params": [p for n, p in twin.named_parameters() if p.ndim >= 2
                     and "LayerNorm" not in n], "weight_decay": config.weight_decay},
         {"params": [p for n, p in twin.named_parameters() if p.ndim < 2 or "LayerNorm" in n],
          "weight_decay": 0.0}], lr=config.lr, foreach=False)
    ids = torch.randint(5, 1000, (2, 12), generator=torch.Generator().manual_seed(0))
    for net, optimizer in ((module.model, fused), (twin, loop)):
        for _ in range(3):
            net(input_ids=ids, start_positions=torch.tensor([1, 2]),
                end_positions=torch.tensor([3, 4])).loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    a = torch.cat([p.detach().flatten() for p in module.model.parameters()])
    b = torch.cat([p.detach().flatten() for p in twin.parameters()])
    # equal up to rounding, except where a gradient is ~0 (e.g. attention key biases: softmax
    # ignores a shift per query) and Adam's normalised step amplifies the rounding
    close = (a - b).abs() <= 1e-6 + 1e-5 * b.abs()
    assert float(close.float().mean()) > 0.999
    assert float((a - b).abs().max()) <= 3 * config.lr  # Adam moves a weight <= ~lr a step


@pytest.mark.slow
def test_a_ddp_spawn_training_records_its_steps_and_history(tiny_bert, tmp_path):
    """(~40 s: two spawned interpreters.) The launching process gets the weights back, not
    the loop's state: trainer_state.json comes from the end state the processes wrote."""
    config = CONFIG.model_copy(update={"max_steps": 4, "batch_size": 8, "devices": 2,
                                       "strategy": "ddp_spawn", "log_every_n_steps": 1})
    out = train_reader(synthetic_examples(40, 1), config, tmp_path / "reader", tiny_bert)
    state = json.loads((out / "trainer_state.json").read_text())
    assert state["global_step"] == 4
    assert [h["step"] for h in state["log_history"]] == [1, 2, 3, 4]
