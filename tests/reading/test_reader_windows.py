"""Windows and span decoding: gold spans survive featurisation -> decoding exactly (Unicode,
contexts many windows long), question cutting, n-best and maximum answer length."""

from __future__ import annotations

import pytest
import torch

from models.reader.config import WindowConfig
from models.reader.decoding import SpanCollector, context_mask, window_top_spans
from models.reader.features import QAExample, featurize
from tasks.io.squad import SquadAnswer

WINDOW = WindowConfig(max_length=48, doc_stride=12, max_query_length=12, n_best=5,
                      max_answer_length=12)
FILLER = ("Zürich lies on a lake. Ōsaka 大阪 grew by the sea; Émile Brontë’s café opened in "
          "1203 — “quietly”. ")


def _example(answer: str, prefix_repeats: int, qid: str = "q") -> QAExample:
    context = FILLER * prefix_repeats + f"Then {answer} was named. " + FILLER * 2
    start = context.index(f"Then {answer}") + len("Then ")
    return QAExample(qid, "What was named?", context, (SquadAnswer(answer, start),))


def _decode_labels(tokenizer, examples, window=WINDOW):
    """Decode each example from logits that are 1 at its labelled tokens (a perfect model)."""
    feats = featurize(tokenizer, examples, window)
    length = max(len(w) for w in feats.windows)
    start = torch.full((len(feats.windows), length), -5.0)
    end = torch.full((len(feats.windows), length), -5.0)
    for row, w in enumerate(feats.windows):
        if w.start_position:
            start[row, w.start_position] = end[row, w.end_position] = 5.0
    collector = SpanCollector(window.n_best)
    collector.add(feats.windows, *window_top_spans(start, end,
                                                   context_mask(feats.windows, length),
                                                   window.n_best, window.max_answer_length))
    return feats, collector.predictions([e.id for e in examples],
                                        [e.context for e in examples])


@pytest.mark.parametrize("answer", ["Brontë’s café", "大阪", "Zürich", "Ōsaka Bay 1203",
                                    "the “Émile” prize"])
def test_unicode_spans_round_trip_exactly(tokenizer, answer):
    ex = _example(answer, 0)
    feats, (pred,) = _decode_labels(tokenizer, [ex])
    assert not feats.unlabelled
    assert (pred.text, pred.start) == (answer, ex.answers[0].answer_start)


def test_long_context_answer_found_across_windows(tokenizer):
    examples = [_example("Ōsaka Bay 1203", n, f"q{n}") for n in (0, 3, 9)]
    feats, preds = _decode_labels(tokenizer, examples)
    windows = [sum(w.example_index == i for w in feats.windows) for i in range(3)]
    assert windows[0] < windows[1] < windows[2] and windows[2] >= 8
    for ex, pred in zip(examples, preds, strict=True):
        assert pred.text == "Ōsaka Bay 1203"
        assert pred.start == ex.answers[0].answer_start
    # windows that do not hold the answer are labelled [CLS]
    assert sum(w.start_position == 0 for w in feats.windows) >= windows[2] - 3


def test_windows_overlap_by_doc_stride(tokenizer):
    feats = featurize(tokenizer, [_example("x", 6)], WINDOW, labels=False)
    first, second = feats.windows[0], feats.windows[1]
    shared = [o for o in first.offsets if o is not None][-WINDOW.doc_stride:]
    assert [o for o in second.offsets if o is not None][:WINDOW.doc_stride] == shared
    assert all(len(w) <= WINDOW.max_length for w in feats.windows)


def test_answer_longer_than_a_window_is_counted_not_dropped(tokenizer):
    long_answer = " ".join(["word"] * 60)
    feats = featurize(tokenizer, [_example(long_answer, 1, "long")], WINDOW)
    assert feats.unlabelled == ["long"]
    assert all(w.start_position == 0 for w in feats.windows)
    assert "1 answers in no window" in feats.summary()


def test_long_question_is_cut_and_reported(tokenizer):
    ex = QAExample("q", "why " * 40 + "?", "A short context.", ())
    feats = featurize(tokenizer, [ex], WINDOW, labels=False)
    assert feats.truncated_questions == ["q"]
    types = feats.windows[0].token_type_ids
    assert types.index(1) == WINDOW.max_query_length + 2  # [CLS] q*12 [SEP]


def test_decoding_respects_max_answer_length_and_n_best():
    start = torch.tensor([[0.0, 9.0, 0.0, 0.0, 0.0, 0.0]])
    end = torch.tensor([[0.0, 0.0, 0.0, 0.0, 0.0, 9.0]])
    mask = torch.tensor([[False, True, True, True, True, True]])
    scores, starts, ends = window_top_spans(start, end, mask, n_best=3, max_answer_length=3)
    assert ((ends - starts) < 3).all() and (starts >= 1).all() and (ends >= starts).all()
    scores, starts, ends = window_top_spans(start, end, mask, n_best=3, max_answer_length=5)
    assert (starts[0, 0].item(), ends[0, 0].item()) == (1, 5)
    assert scores[0, 0].item() == 18.0 and scores.shape == (1, 3)


def test_config_rejects_windows_without_context_room():
    with pytest.raises(ValueError, match="must exceed doc_stride"):
        WindowConfig(max_length=64, doc_stride=40, max_query_length=24)


def test_empty_context_is_an_error(tokenizer):
    with pytest.raises(ValueError, match="'e'.*empty context"):
        featurize(tokenizer, [QAExample("e", "what?", "   ", ())], WINDOW)
