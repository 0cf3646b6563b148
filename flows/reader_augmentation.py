"""Flow: readers re-trained on paraphrased training questions vs the reader trained on the
original ones (Gan & Ng, 2019, Tables 3-6).

Each kind of ``readers.augmentation.kinds`` is a stage of its own (:mod:`flows.augment_reader`:
augmented training file, re-trained reader, its predictions and counts under
``data/reader_augmentation/<kind>/`` and ``results/reader_augmentation/<kind>/``). This stage
compares them with the train-reader stage's reader (``data/readers/<model>``, trained on the
original questions: the "before"), on the paraphrased sets (orig and para), the released sets
(``evaluate_released``) and SQuAD dev: the readers stage's prediction files of that reader are
reused where present, the others predicted here (``results/reader_augmentation/before/``,
whose ``files.json`` says which file was the "before" of each) -> EM/F1 before vs after with
paired bootstrap CIs -> ``metrics/reader_augmentation.json`` + ``reports/reader_augmentation.md``.
With ``extra_seeds`` the before reader and every re-trained one are trained again with each
seed (``data/reader_augmentation/seeds/``) and the gains are summarised over the seeds (not in
the paper: one training draw's CIs do not cover the training randomness).
"""

from __future__ import annotations

import json
from pathlib import Path

from prefect import flow

from flows._evaluated_files import evaluation_files
from flows._params import resolve
from flows.train_reader import trained_reader
from tasks.config import Params
from tasks.io.atomic import write_json
from tasks.io.errors import MissingInputError
from tasks.layout import Layout
from tasks.model_names import model_slug
from tasks.reading.augmentation import ADDED_FILE
from tasks.reading.stages import compare_augmented_task, predict_task, train_reader_task
from tasks.reading.trained_as import require_trained_as


@flow(name="reader-augmentation", log_prints=True)
def reader_augmentation(params: Params | None = None, profile: str | None = None,
                        params_file: str | None = None) -> dict:
    """Compare each kind's re-trained reader with the reader trained on the original
    questions (and over ``extra_seeds``): Tables 3-6."""
    params = resolve(params, profile, params_file)
    layout, cfg, aug = Layout(params), params.readers, params.readers.augmentation
    sim = params.paraphrase.similarity
    before_name = model_slug(cfg.model.model)
    before_dir = trained_reader(params)
    inputs = evaluation_files(params)
    counts = {kind: augmented_kind(params, kind) for kind in aug.kinds}
    after = {kind: augmented_predictions(params, kind, inputs) for kind in aug.kinds}
    added = {kind: layout.augmentation_dir(kind) / "data" / ADDED_FILE for kind in aug.kinds}
    for out in (layout.augmentation_before_predictions, layout.augmentation_seed_readers,
                layout.augmentation_seed_results):  # DVC outputs, empty when unused
        out.mkdir(parents=True, exist_ok=True)
    before = _before_predictions(params, before_dir, inputs) if aug.kinds else {}
    seed_runs = None
    if aug.kinds and aug.extra_seeds:
        seed_runs = {cfg.model.seed: {"before": before, "after": after}}
        seed_runs.update({seed: _seed_run(params, seed, inputs, counts)
                          for seed in aug.extra_seeds})
    notes = (f"Profile `{params.profile}`; reader `{cfg.model.model}` (before: the train-reader "
             f"stage's `{before_name}`); paraphraser `{params.paraphrase.generator}`; "
             f"similarity bars "
             f"{sim.augmentation} (non-adversarial), {sim.adversarial_augmentation} "
             "(adversarial), kept when above"
             + (f"; then only those the world raters accept ({', '.join(params.paraphrase.raters)}"
                f": every rater >= {params.paraphrase.min_rating} on meaning and fluency, "
                "tasks/demo/raters.py; the paper did not rate its augmentation data), where "
                "the training set's grammar reads the original (its questions about the "
                "contexts' distractor sentences included, with their rephrasings; elsewhere "
                "the bar alone decides, as in the paper)."
                if aug.world_raters else "."),)
    metrics = compare_augmented_task(
        before, after, inputs, counts, metrics_path=layout.augmentation_metrics,
        report_path=layout.augmentation_report, added_tables=added, notes=notes,
        n_bootstrap=cfg.n_bootstrap, seed=cfg.bootstrap_seed, confidence=cfg.confidence,
        seed_runs=seed_runs)
    for kind, block in metrics["kinds"].items():
        c = block["augmentation"]
        print(f"{kind}: {c['added']} of {c['requested']} paraphrased questions added "
              f"({c['skipped_below_bar']} candidates below the {c['threshold']} bar)")
        for name, b in block["sets"].items():
            if b["questions"]:
                g = b["f1_gain"]
                print(f"  {name}: F1 {b['before']['f1']:.2f} -> {b['after']['f1']:.2f} "
                      f"({g['difference']:+.2f} [{g['ci_low']:+.2f}, {g['ci_high']:+.2f}])")
    for kind, block in metrics.get("seeds", {}).get("kinds", {}).items():
        for name, b in block["sets"].items():
            if b["questions"]:
                g = b["exact_match_gain"]
                print(f"  {kind} {name} over seeds {metrics['seeds']['seeds']}: EM gain "
                      f"{g['mean']:+.2f} (sd {g['sd']}), {g['above_zero']} of {g['seeds']} "
                      "seeds gain")
    print(f"reader augmentation -> {layout.augmentation_report}")
    return metrics


def _stage_command(kind: str) -> str:
    """The command that runs an augmentation kind's stage (:mod:`flows.augment_reader`)."""
    return f"qastress stage augment-{kind.replace('_', '-')}"


def augmented_kind(params: Params, kind: str) -> dict:
    """The counts that the kind's stage wrote (``augmentation.json``); a clear error when that
    stage has not run with the kind configured, or trained its reader with other
    ``readers.model`` settings than the reader it is compared with."""
    layout = Layout(params)
    path = layout.augmentation_counts(kind)
    stage = _stage_command(kind)
    if not path.is_file():
        raise MissingInputError(f"no augmentation of kind {kind!r} at {path}: run its stage "
                                f"first ({stage})")
    counts = json.loads(path.read_text(encoding="utf-8"))
    if not counts.get("configured"):
        raise MissingInputError(f"{path}: the {kind!r} stage ran while the kind was not in "
                                f"readers.augmentation.kinds; run it again ({stage})")
    require_trained_as(layout.augmentation_reader(kind), params.readers.model, stage)
    return {key: value for key, value in counts.items() if key not in ("kind", "configured")}


def augmented_predictions(params: Params, kind: str, inputs: dict[str, Path]) -> dict[str, Path]:
    """``{name: predictions JSON}`` of the kind's re-trained reader for every evaluated file;
    a clear error naming those missing (its stage ran with other evaluated files)."""
    out = Layout(params).augmentation_predictions(kind)
    files = {name: out / f"{name}.json" for name in inputs}
    missing = sorted(name for name, path in files.items() if not path.is_file())
    if missing:
        raise MissingInputError(f"{out}: no predictions of the {kind!r} reader for {missing}; "
                                f"run its stage again ({_stage_command(kind)})")
    return files


def _seed_run(params: Params, seed: int, inputs: dict[str, Path], counts: dict) -> dict:
    """One of ``readers.augmentation.extra_seeds``: the reader trained on the original
    questions (as the train-reader stage trains it) and on each kind's augmented file, with
    that seed, and their predictions -> ``{"before": {file: path}, "after": {kind: {file:
    path}}}``."""
    layout, cfg = Layout(params), params.readers
    model = cfg.model.model_copy(update={"seed": seed})
    train_files = {"before": params.raw_path("squad_train"),
                   **{kind: Path(c["train_file"]) for kind, c in counts.items()}}
    predictions = {}
    for reader, train_file in train_files.items():
        reader_dir = layout.augmentation_seed_reader(seed, reader)
        train_reader_task(train_file, reader_dir, model,
                          checkpoint_dir=str(layout.reader_checkpoints(reader_dir)))
        predictions[reader] = predict_task(
            reader_dir, inputs, layout.augmentation_seed_predictions(seed, reader),
            batch_size=cfg.model.predict_batch_size, cpu_threads=cfg.model.cpu_threads)
    print(f"seed {seed}: {len(train_files)} readers trained and predicted")
    return {"before": predictions.pop("before"), "after": predictions}


def _before_predictions(params: Params, before_dir: Path,
                        inputs: dict[str, Path]) -> dict[str, Path]:
    """The readers stage's predictions of the trained reader where it wrote them
    (``results/readers/<model>/<name>.json``), the others predicted here; which file is the
    "before" of each evaluated file -> ``before/files.json``."""
    layout, cfg = Layout(params), params.readers
    name = model_slug(cfg.model.model)
    found = {key: layout.reader_predictions(name) / f"{key}.json" for key in inputs}
    found = {key: path for key, path in found.items() if path.is_file()}
    rest = {key: path for key, path in inputs.items() if key not in found}
    out = layout.augmentation_before_predictions
    if rest:
        found.update(predict_task(before_dir, rest, out,
                                  batch_size=cfg.model.predict_batch_size,
                                  cpu_threads=cfg.model.cpu_threads))
    write_json(out / "files.json", {key: str(found[key]) for key in inputs}, indent=2)
    print(f"before: {len(inputs) - len(rest)} prediction files of the readers stage reused, "
          f"{len(rest)} predicted")
    return found


if __name__ == "__main__":
    from flows.cli import main_for

    main_for("reader-augmentation")
