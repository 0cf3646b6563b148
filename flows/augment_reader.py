"""Flows: paraphrase the training questions of one augmentation kind and re-train the reader
on them (Gan & Ng, 2019, Tables 3-6), one stage per kind.

For a kind of ``readers.augmentation.kinds``, the SQuAD training questions
(``sources.squad_train``, first ``max_source_questions``) get suggestions — ``non_adversarial``:
PPDB suggestions (the paraphrase flow's PPDB table); ``adversarial``: context suggestions from
Flair NER + chunking (``paraphrase.ner_tagger`` / ``chunk_tagger``, or the demo world's offline
taggers) — the paraphrase flow's trained paraphraser (``data/paraphrase/paraphraser``) writes
paraphrases with them, in shards on the task runner, and the similarity filter keeps those
above ``paraphrase.similarity.augmentation`` (0.9) or ``adversarial_augmentation`` (0.83);
on the demo world with ``readers.augmentation.world_raters`` only those the world raters
accept where they can judge (``rated.parquet``; not in the paper).
``n_augmented`` of them join the training file (SQuAD v1.1, ids ``<id>_para<k>``) ->
``data/reader_augmentation/<kind>/``; ``readers.model`` is re-trained on it with the readers'
settings (``<kind>/reader/``) and answers every evaluated file
(:func:`flows._evaluated_files.evaluation_files`) ->
``results/reader_augmentation/<kind>/<name>.json``; the counts of every step ->
``<kind>/augmentation.json``. The reader-augmentation stage compares the
kinds with the reader trained on the original questions.

The kinds are separate stages because neither needs the other: the study runs them side by
side, and ``dvc repro`` re-runs only the kind whose settings changed. A kind left out of
``readers.augmentation.kinds`` is not run by the study; run anyway (``dvc repro`` runs every
stage) it writes ``{"configured": false}`` and nothing else. Run one with ``qastress stage
augment-non-adversarial`` or ``augment-adversarial``.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from flows._evaluated_files import evaluation_files
from flows._params import resolve
from flows._taggers import flair_taggers
from flows.generate_paraphrases import generate_paraphrases_on
from tasks.config import Params
from tasks.demo.raters import world_rated_candidates_task
from tasks.io.atomic import write_json
from tasks.io.errors import MissingInputError
from tasks.layout import Layout
from tasks.paraphrase.flow_tasks import adversarial_task, similarity_task, suggestions_task
from tasks.reading.augmentation import KEEP_COLUMNS
from tasks.reading.stages import augment_task, predict_task, train_reader_task

#: The similarity threshold (``paraphrase.similarity.<name>``) of each kind.
THRESHOLDS = {"non_adversarial": "augmentation", "adversarial": "adversarial_augmentation"}
#: Files of a saved paraphraser (``models.paraphraser.checkpoint``).
PARAPHRASER_FILES = ("config.json", "model.safetensors", "spiece.model")


def paraphraser_dir(params: Params) -> Path | None:
    """The paraphrase flow's trained paraphraser (``None`` for the PPDB-substitution
    baseline); a clear error when it is missing."""
    layout = Layout(params)
    if not layout.ppdb_table.is_file():
        raise MissingInputError(f"no PPDB table at {layout.ppdb_table}: run the paraphrase "
                                "stage first (qastress stage paraphrase)")
    if params.paraphrase.generator != "neural":
        return None
    path = layout.paraphraser_dir
    missing = [name for name in PARAPHRASER_FILES if not (path / name).is_file()]
    if missing:
        raise MissingInputError(f"no paraphraser model found at {path} ({', '.join(missing)} "
                                "missing): run the paraphrase stage first (qastress stage "
                                "paraphrase) or set paraphrase.generator: ppdb_substitution")
    return path


def augment_kind(params: Params, kind: str) -> dict:
    """One kind end to end: augmented training file, re-trained reader, its predictions; the
    counts (also written to ``augmentation.json``). ``{"configured": False}`` for a kind not
    in ``readers.augmentation.kinds``."""
    layout, cfg, aug = Layout(params), params.readers, params.readers.augmentation
    if kind not in THRESHOLDS:
        raise ValueError(f"unknown augmentation kind {kind!r}; expected one of "
                         f"{sorted(THRESHOLDS)}")
    if kind not in aug.kinds:
        layout.augmentation_predictions(kind).mkdir(parents=True, exist_ok=True)
        write_json(layout.augmentation_counts(kind), {"kind": kind, "configured": False})
        print(f"{kind} is not in readers.augmentation.kinds {list(aug.kinds)}: nothing to do")
        return {"configured": False}
    if aug.world_raters and params.sources.world != "demo":
        raise ValueError("readers.augmentation.world_raters needs the demo world (sources.world: "
                         f"demo, not {params.sources.world!r}): only the demo world knows what "
                         "its questions ask; set it to false for real data")
    sim = params.paraphrase.similarity
    thresholds = {name: getattr(sim, name) for name in THRESHOLDS.values()}
    work = layout.augmentation_dir(kind)
    # augmentation.json marks the kind's stage done: gone until this run is, so a run that
    # dies half way is not compared (reader-augmentation) by the last complete run's counts
    layout.augmentation_counts(kind).unlink(missing_ok=True)
    paraphraser, evaluated = paraphraser_dir(params), evaluation_files(params)  # inputs first
    counts = _augment(params, kind, paraphraser, thresholds, work)
    reader_dir = layout.augmentation_reader(kind)
    train_reader_task(Path(counts["train_file"]), reader_dir, cfg.model,
                      checkpoint_dir=str(layout.reader_checkpoints(reader_dir)))
    predict_task(reader_dir, evaluated, layout.augmentation_predictions(kind),
                 batch_size=cfg.model.predict_batch_size, cpu_threads=cfg.model.cpu_threads)
    counts = {"kind": kind, "configured": True, **counts}
    write_json(layout.augmentation_counts(kind), counts, indent=2)
    print(f"{kind}: {counts['added']} of {counts['requested']} paraphrased questions added "
          f"({counts['skipped_below_bar']} candidates below the {counts['threshold']} bar); "
          f"reader re-trained -> {reader_dir}")
    return counts


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


@flow(name="augment-non-adversarial", log_prints=True)
def augment_non_adversarial(params: Params | None = None, profile: str | None = None,
                            params_file: str | None = None) -> dict:
    """PPDB-suggested paraphrases of the training questions; the reader re-trained on them."""
    return augment_kind(resolve(params, profile, params_file), "non_adversarial")


@flow(name="augment-adversarial", log_prints=True)
def augment_adversarial(params: Params | None = None, profile: str | None = None,
                        params_file: str | None = None) -> dict:
    """Paraphrases guided by context suggestions (Flair NER + chunking); the reader re-trained
    on them."""
    return augment_kind(resolve(params, profile, params_file), "adversarial")


if __name__ == "__main__":  # python -m flows.augment_reader {non-adversarial|adversarial} ...
    import sys

    from flows.cli import main_for

    if len(sys.argv) < 2 or sys.argv[1] not in ("non-adversarial", "adversarial"):
        sys.exit("usage: python -m flows.augment_reader {non-adversarial|adversarial} "
                 "[--profile P] [--params FILE] [--set KEY=VALUE ...]")
    kind = sys.argv.pop(1)
    main_for(f"augment-{kind}", prog=f"python -m flows.augment_reader {kind}")
