"""The SQuAD files on which the reader-augmentation stages compare readers: each kind's stage
(:mod:`flows.augment_reader`) predicts them with its re-trained reader, the comparison stage
(:mod:`flows.reader_augmentation`) with the reader trained on the original questions."""

from __future__ import annotations

from pathlib import Path

from flows._params import stage_output
from tasks.config import Params
from tasks.io.squad import discover_paraphrase_sets
from tasks.layout import Layout


def evaluation_files(params: Params) -> dict[str, Path]:
    """``{name: SQuAD file}`` evaluated before and after: the paraphrased sets (orig and
    para), the released ones when configured and present, and SQuAD dev."""
    layout, cfg = Layout(params), params.readers
    sets = discover_paraphrase_sets(stage_output(
        layout.paraphrase_test_sets, "paraphrased sets", "paraphrase"))
    if cfg.augmentation.evaluate_released and cfg.released_sets:
        sets.update(discover_paraphrase_sets(Path(cfg.released_sets), prefix="released-"))
    files = {f"{name}_{variant}": path for name, pair in sets.items()
             for variant, path in zip(("orig", "para"), pair, strict=True)}
    if cfg.evaluate_dev:
        files["squad_dev"] = params.raw_path("squad_dev")
    return files
