"""Flow: readers on original vs paraphrased SQuAD questions (Gan & Ng, 2019, Tables 1-2).

The reader that the train-reader stage fine-tuned on the SQuAD v1.1 training questions
(``data/readers/<readers.model>/``, :mod:`flows.train_reader`) and the fine-tuned checkpoints
of ``readers.pretrained`` answer every question of the paraphrased test sets (the paraphrase
flow's ``data/paraphrasing-squad/<set>_{orig,para}.json`` and, when present, the released sets
of ``readers.released_sets``) -> ``results/readers/<reader>/<set>_<variant>.json`` ({id:
answer}) -> EM/F1 of orig and para, the drop and its paired bootstrap CI ->
``metrics/readers.json`` + ``reports/readers.md`` + Prefect table artifact. Beyond the paper:
where the subject of each SQuAD dev question is known (the demo world's
``sources.squad_dev_entities``), SQuAD dev EM/F1 per subject-frequency bucket
(``readers.subject_buckets``, by hyperlink count; see :mod:`tasks.reading.subject_buckets`),
and the flow's own paraphrased sets in the same buckets (orig vs para per bucket); skipped with
a note when absent (real SQuAD). Every set, released ones included, is also scored by what its
paraphrases change (:mod:`tasks.reading.edit_groups`: drops a word of the answer's sentence,
changes other content words, changes none).
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from flows._params import resolve, stage_output
from flows.train_reader import trained_reader
from tasks.config import Params
from tasks.io.squad import discover_paraphrase_sets
from tasks.layout import Layout
from tasks.model_names import model_slug
from tasks.reading.stages import (
    dev_buckets_task,
    edit_groups_task,
    evaluate_task,
    paraphrase_buckets_task,
    predict_task,
    score_dev_task,
)


def _bucketing(params: Params) -> dict | None:
    """The subject links, hyperlink counts and bucket settings shared by the dev and the
    paraphrased-set bucket tables; None when the links or counts are absent (real SQuAD)."""
    subjects, counts = params.raw_path("squad_dev_entities"), params.raw_path("hyperlink_counts")
    if not (subjects.is_file() and counts.is_file()):
        return None
    eq, cfg = params.entity_questions, params.readers
    return {"subjects_file": subjects, "hyperlinks": counts, "n_buckets": cfg.subject_buckets,
            "order": eq.bucket_order, "key": eq.hyperlink_key,
            "weight": cfg.subject_bucket_weight}


def dev_buckets(params: Params, predictions: dict[str, dict[str, Path]]) -> dict | None:
    """SQuAD dev EM/F1 per subject-frequency bucket when the subjects are known (the demo
    world's ``sources.squad_dev_entities``) and hyperlink counts exist; else None, said."""
    bucketing = _bucketing(params)
    if bucketing is None:
        print(f"no subject links ({params.raw_path('squad_dev_entities')}) or hyperlink counts "
              f"({params.raw_path('hyperlink_counts')}): no SQuAD dev scores per "
              "subject-frequency bucket")
        return None
    return dev_buckets_task({r: p["squad_dev"] for r, p in predictions.items()},
                            params.raw_path("squad_dev"), **bucketing)


def paraphrase_buckets(params: Params, predictions: dict[str, dict[str, Path]],
                       set_files: dict[str, tuple[Path, Path]]) -> dict[str, dict]:
    """The flow's own paraphrased sets (those with a ``<set>_pairs.parquet`` linking each pair
    to its SQuAD dev question) per subject-frequency bucket; ``{}`` without subject links."""
    bucketing = _bucketing(params)
    if bucketing is None:
        return {}
    cfg = params.readers
    out: dict[str, dict] = {}
    for name, (orig, para) in set_files.items():
        pairs = orig.with_name(f"{name}_pairs.parquet")
        if not pairs.is_file():  # the released sets: no link to the dev questions
            continue
        out[name] = paraphrase_buckets_task(
            {r: (p[f"{name}_orig"], p[f"{name}_para"]) for r, p in predictions.items()},
            orig, para, pairs, params.raw_path("squad_dev"), **bucketing,
            n_bootstrap=cfg.n_bootstrap, seed=cfg.bootstrap_seed, confidence=cfg.confidence)
    return out


def edit_groups(params: Params, predictions: dict[str, dict[str, Path]],
                set_files: dict[str, tuple[Path, Path]]) -> dict[str, dict]:
    """Every paraphrased set (the released ones too) scored per edit group: whether its
    paraphrases drop a word of the answer's sentence, change other content words or none."""
    cfg = params.readers
    return {name: edit_groups_task(
        {r: (p[f"{name}_orig"], p[f"{name}_para"]) for r, p in predictions.items()}, orig, para,
        n_bootstrap=cfg.n_bootstrap, seed=cfg.bootstrap_seed, confidence=cfg.confidence)
        for name, (orig, para) in set_files.items()}


@flow(name="readers", log_prints=True)
def readers(params: Params | None = None, profile: str | None = None,
            params_file: str | None = None) -> dict:
    """Predict the paraphrased sets with the trained reader, compare EM/F1 orig vs para."""
    params = resolve(params, profile, params_file)
    layout, cfg = Layout(params), params.readers
    set_files = discover_paraphrase_sets(stage_output(
        layout.paraphrase_test_sets, "paraphrased sets", "paraphrase"))
    released = Path(cfg.released_sets) if cfg.released_sets else None
    set_files.update(discover_paraphrase_sets(released, prefix="released-"))
    if released is not None and not released.is_dir():
        print(f"released sets not found at {released}: skipped")
    trained = model_slug(cfg.model.model)
    model_dirs = {trained: trained_reader(params)}
    model_dirs.update({model_slug(name): name for name in cfg.pretrained})
    inputs = {f"{name}_{variant}": path for name, pair in set_files.items()
              for variant, path in zip(("orig", "para"), pair, strict=True)}
    if cfg.evaluate_dev:
        inputs["squad_dev"] = params.raw_path("squad_dev")
    predictions = {
        reader: predict_task(model_dir, inputs, layout.reader_predictions(reader),
                             batch_size=cfg.model.predict_batch_size,
                             cpu_threads=cfg.model.cpu_threads)
        for reader, model_dir in model_dirs.items()}
    dev = (score_dev_task({r: p["squad_dev"] for r, p in predictions.items()},
                          params.raw_path("squad_dev")) if cfg.evaluate_dev else None)
    buckets = dev_buckets(params, predictions) if cfg.evaluate_dev else None
    para_buckets = (paraphrase_buckets(params, predictions, set_files) if cfg.evaluate_dev
                    else {})
    metrics = evaluate_task(predictions, set_files, layout.readers_metrics,
                            layout.readers_report, dev, n_bootstrap=cfg.n_bootstrap,
                            seed=cfg.bootstrap_seed, confidence=cfg.confidence,
                            dev_buckets=buckets, paraphrase_buckets=para_buckets,
                            edit_groups=edit_groups(params, predictions, set_files))
    for reader, sets in metrics["readers"].items():
        for name, b in sets.items():
            if not b["questions"]:
                print(f"{name}: empty set, nothing to score")
                continue
            d = b["f1_drop"]
            print(f"{name} {reader}: F1 orig {b['orig']['f1']:.2f} para {b['para']['f1']:.2f} "
                  f"drop {d['difference']:+.2f} [{d['ci_low']:+.2f}, {d['ci_high']:+.2f}]")
    print(f"readers orig vs paraphrased -> {layout.readers_report}")
    return metrics


if __name__ == "__main__":
    from flows.cli import main_for

    main_for("readers")
