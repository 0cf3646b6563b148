"""The Flair NER and chunk taggers of the adversarial suggestions (paraphrase flow, reader
augmentation): the ones ``paraphrase.ner_tagger`` / ``chunk_tagger`` name, else -- on the demo
world only -- the offline taggers trained on it (cached)."""

from __future__ import annotations

from pathlib import Path

from tasks.config import Params
from tasks.demo.taggers import train_taggers_task
from tasks.layout import Layout


def _as_path(name_or_path: str | Path) -> Path | str:
    """A local model file as a Path (the task cache hashes its content), else the hub name."""
    return Path(name_or_path) if Path(name_or_path).exists() else str(name_or_path)


def flair_taggers(params: Params) -> tuple[Path | str, Path | str, dict | None]:
    """``(ner, chunk, training summary or None)``; real data must name both taggers."""
    cfg = params.paraphrase
    ner, chunk = cfg.ner_tagger, cfg.chunk_tagger
    trained = None
    if ner is None or chunk is None:
        if params.sources.world != "demo":
            raise ValueError("paraphrase.ner_tagger and paraphrase.chunk_tagger must name Flair "
                             "models (hub names or paths) for real data: the offline taggers "
                             "are trained on the demo world")
        trained = train_taggers_task(params.demo_world, Layout(params).paraphrase_taggers,
                                     cfg.quick_taggers)
        ner, chunk = ner or trained["ner"], chunk or trained["chunk"]
        print(f"offline Flair taggers of the demo world: NER test F1 "
              f"{_f1(trained['ner_test_f1'])}, chunk test F1 {_f1(trained['chunk_test_f1'])}; "
              f"Flair's training logs: {Path(trained['ner']).parent / 'training.log'}, "
              f"{Path(trained['chunk']).parent / 'training.log'}")
    return _as_path(ner), _as_path(chunk), trained


def _f1(score: float | None) -> str:
    return "-" if score is None else f"{score:.3f}"
