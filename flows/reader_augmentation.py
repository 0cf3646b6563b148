"""Flow: re-train the reader on paraphrased training questions (Gan & Ng, 2019, Tables 3-6).

For each kind of ``readers.augmentation.kinds``, the SQuAD training questions
(``sources.squad_train``, first ``max_source_questions``) get suggestions — ``non_adversarial``:
PPDB suggestions (the paraphrase flow's PPDB table); ``adversarial``: context suggestions from
Flair NER + chunking (``paraphrase.ner_tagger`` / ``chunk_tagger``, or the demo world's offline
taggers) — the paraphrase flow's trained paraphraser (``data/paraphrase/paraphraser``) writes
paraphrases with them, in shards on the task runner, and the similarity filter keeps those
above ``paraphrase.similarity.augmentation`` (0.9) or ``adversarial_augmentation`` (0.83);
on the demo world with ``readers.augmentation.world_raters`` only those the world raters
accept where they can judge (``rated.parquet``; not in the paper).
``n_augmented`` of them join the training file (SQuAD v1.1, ids ``<id>_para<k>``) ->
``data/reader_augmentation/<kind>/``; ``readers.model`` is re-trained on it with the readers
flow's settings. The readers flow's reader (``data/readers/<model>``, trained on the original
questions: the "before") and every re-trained one answer the paraphrased sets (orig and para),
the released sets (``evaluate_released``) and SQuAD dev (the readers flow's prediction files
of its reader are reused where present) -> EM/F1 before vs after with paired
bootstrap CIs -> ``metrics/reader_augmentation.json`` + ``reports/reader_augmentation.md``.
With ``extra_seeds`` the before reader and every re-trained one are trained again with each
seed (``data/reader_augmentation/seeds/``) and the gains are summarised over the seeds (not in
the paper: one training draw's CIs do not cover the training randomness).
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from flows._params import resolve
from flows._taggers import flair_taggers
from flows.generate_paraphrases import generate_paraphrases_on
from tasks.config import Params
from tasks.demo.raters import world_rated_candidates_task
from tasks.io.squad import discover_paraphrase_sets
from tasks.layout import Layout
from tasks.model_names import model_slug
from tasks.paraphrase.flow_tasks import adversarial_task, similarity_task, suggestions_task
from tasks.reading.augmentation import ADDED_FILE, KEEP_COLUMNS
from tasks.reading.stages import (
    augment_task,
    compare_augmented_task,
    predict_task,
    train_reader_task,
)

#: The similarity threshold (``paraphrase.similarity.<name>``) of each kind.
THRESHOLDS = {"non_adversarial": "augmentation", "adversarial": "adversarial_augmentation"}
#: Files of a saved paraphraser (``models.paraphraser.checkpoint``).
PARAPHRASER_FILES = ("config.json", "model.safetensors", "spiece.model")


@flow(name="reader-augmentation", log_prints=True)
def reader_augmentation(params: Params | None = None, profile: str | None = None,
                        params_file: str | None = None) -> dict:
    """Augment the training questions, re-train the reader, compare before vs after."""
    params = resolve(params, profile, params_file)
    layout, cfg, aug = Layout(params), params.readers, params.readers.augmentation
    sim = params.paraphrase.similarity
    if aug.world_raters and params.sources.world != "demo":
        raise ValueError("readers.augmentation.world_raters needs the demo world (sources.world: "
                         f"demo, not {params.sources.world!r}): only the demo world knows what "
                         "its questions ask; set it to false for real data")
    before_name = model_slug(cfg.model.model)
    before_dir = layout.reader_dir(before_name)
    if not (before_dir / "config.json").is_file():
        raise FileNotFoundError(f"no trained reader at {before_dir} (config.json missing): run "
                                "the readers stage first (qastress stage readers)")
    paraphraser = paraphraser_dir(params) if aug.kinds else None
    inputs = evaluation_files(params)
    thresholds = {name: getattr(sim, name) for name in THRESHOLDS.values()}
    counts, after, added = {}, {}, {}
    for kind in aug.kinds:
        work = layout.augmentation_dir(kind)
        counts[kind] = _augment(params, kind, paraphraser, thresholds, work)
        reader_dir = work / "reader"
        train_reader_task(Path(counts[kind]["train_file"]), reader_dir, cfg.model)
        after[kind] = predict_task(reader_dir, inputs, layout.augmentation_predictions(kind),
                                   batch_size=cfg.model.predict_batch_size,
                                   cpu_threads=cfg.model.cpu_threads)
        added[kind] = work / "data" / ADDED_FILE
    before = _before_predictions(params, before_dir, inputs) if aug.kinds else {}
    seed_runs = None
    if aug.kinds and aug.extra_seeds:
        seed_runs = {cfg.model.seed: {"before": before, "after": after}}
        seed_runs.update({seed: _seed_run(params, seed, inputs, counts)
                          for seed in aug.extra_seeds})
    notes = (f"Profile `{params.profile}`; reader `{cfg.model.model}` (before: the readers "
             f"flow's `{before_name}`); paraphraser `{params.paraphrase.generator}`; "
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


def _seed_run(params: Params, seed: int, inputs: dict[str, Path], counts: dict) -> dict:
    """One of ``readers.augmentation.extra_seeds``: the reader trained on the original
    questions (as the readers flow trains it) and on each kind's augmented file, with that
    seed, and their predictions -> ``{"before": {file: path}, "after": {kind: {file: path}}}``."""
    layout, cfg = Layout(params), params.readers
    model = cfg.model.model_copy(update={"seed": seed})
    train_files = {"before": params.raw_path("squad_train"),
                   **{kind: Path(c["train_file"]) for kind, c in counts.items()}}
    predictions = {}
    for reader, train_file in train_files.items():
        reader_dir = layout.augmentation_seed_reader(seed, reader)
        train_reader_task(train_file, reader_dir, model)
        predictions[reader] = predict_task(
            reader_dir, inputs, layout.augmentation_seed_predictions(seed, reader),
            batch_size=cfg.model.predict_batch_size, cpu_threads=cfg.model.cpu_threads)
    print(f"seed {seed}: {len(train_files)} readers trained and predicted")
    return {"before": predictions.pop("before"), "after": predictions}


def _before_predictions(params: Params, before_dir: Path,
                        inputs: dict[str, Path]) -> dict[str, Path]:
    """The readers flow's predictions of its reader where it wrote them
    (``results/readers/<model>/<name>.json``), the others predicted here."""
    layout, cfg = Layout(params), params.readers
    name = model_slug(cfg.model.model)
    found = {key: layout.reader_predictions(name) / f"{key}.json" for key in inputs}
    found = {key: path for key, path in found.items() if path.is_file()}
    rest = {key: path for key, path in inputs.items() if key not in found}
    if rest:
        found.update(predict_task(before_dir, rest, layout.augmentation_predictions(name),
                                  batch_size=cfg.model.predict_batch_size,
                                  cpu_threads=cfg.model.cpu_threads))
    print(f"before: {len(inputs) - len(rest)} prediction files of the readers flow reused, "
          f"{len(rest)} predicted")
    return found


def paraphraser_dir(params: Params) -> Path | None:
    """The paraphrase flow's trained paraphraser (``None`` for the PPDB-substitution
    baseline); a clear error when it is missing."""
    layout = Layout(params)
    if not layout.ppdb_table.is_file():
        raise FileNotFoundError(f"no PPDB table at {layout.ppdb_table}: run the paraphrase "
                                "stage first (qastress stage paraphrase)")
    if params.paraphrase.generator != "neural":
        return None
    path = layout.paraphraser_dir
    missing = [name for name in PARAPHRASER_FILES if not (path / name).is_file()]
    if missing:
        raise FileNotFoundError(f"no paraphraser model found at {path} ({', '.join(missing)} "
                                "missing): run the paraphrase stage first (qastress stage "
                                "paraphrase) or set paraphrase.generator: ppdb_substitution")
    return path


def evaluation_files(params: Params) -> dict[str, Path]:
    """``{name: SQuAD file}`` evaluated before and after: the paraphrased sets (orig and
    para), the released ones when configured and present, and SQuAD dev."""
    layout, cfg = Layout(params), params.readers
    sets = discover_paraphrase_sets(layout.paraphrase_test_sets)
    if cfg.augmentation.evaluate_released and cfg.released_sets:
        sets.update(discover_paraphrase_sets(Path(cfg.released_sets), prefix="released-"))
    files = {f"{name}_{variant}": path for name, pair in sets.items()
             for variant, path in zip(("orig", "para"), pair, strict=True)}
    if cfg.evaluate_dev:
        files["squad_dev"] = params.raw_path("squad_dev")
    return files


def _augment(params: Params, kind: str, paraphraser: Path | None, thresholds: dict[str, float],
             work: Path) -> dict:
    """Suggestions -> paraphrases -> similarity -> augmented training file of one kind; its
    counts (with every step's)."""
    layout, para, aug = Layout(params), params.paraphrase, params.readers.augmentation
    squad_train = params.raw_path("squad_train")
    suggestions = work / "suggestions.parquet"
    steps: dict[str, dict] = {}
    if kind == "non_adversarial":
        steps["suggestions"] = suggestions_task(
            squad_train, layout.ppdb_table, suggestions, max_n=para.max_ngram,
            per_question=para.suggestions_per_question, max_per_phrase=para.ppdb_max_per_phrase,
            max_questions=aug.max_source_questions, on_error=para.on_bad_record)
    else:
        ner, chunk, _ = flair_taggers(params)
        steps["suggestions"] = adversarial_task(
            squad_train, ner, chunk, suggestions, per_question=para.suggestions_per_question,
            max_questions=aug.max_source_questions, on_error=para.on_bad_record)
    candidates, scored = work / "candidates.parquet", work / "scored.parquet"
    steps["generation"] = generate_paraphrases_on(
        params.orchestration, suggestions, candidates, paraphraser, layout.ppdb_table, para,
        para.without_suggestion if kind == "non_adversarial" else False)
    steps["similarity"] = similarity_task(candidates, scored, thresholds,
                                          model_path=para.similarity.model,
                                          batch_size=para.similarity.batch_size)
    rated_column = None
    if aug.world_raters:
        rated = work / "rated.parquet"
        steps["world_raters"] = world_rated_candidates_task(
            scored, rated, KEEP_COLUMNS[kind], list(para.raters), para.min_rating)
        scored, rated_column = rated, "world_keep"
    counts = augment_task(squad_train, scored, work / "data", KEEP_COLUMNS[kind],
                          n=aug.n_augmented, per_question=aug.per_question, seed=aug.seed,
                          rated_column=rated_column)
    return {**counts, "threshold": thresholds[THRESHOLDS[kind]], "steps": steps}


if __name__ == "__main__":
    from flows.cli import main_for

    main_for("reader-augmentation")
