"""The reader as pipeline steps: train on a SQuAD file, predict SQuAD files, score them."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from models.reader.config import ReaderConfig
from tasks.io.squad import read_squad
from tasks.io.squad_predictions import write_predictions
from tasks.orchestration import artifact_task
from tasks.reading.augmentation import build_augmented_training
from tasks.reading.augmentation_tables import compare_readers, write_augmentation_tables
from tasks.reading.edit_groups import score_edit_groups
from tasks.reading.retrieve_then_read import (
    load_questions,
    read_top_passages,
    write_predictions_per_k,
)
from tasks.reading.retrieve_then_read_tables import evaluate_open_predictions, write_open_tables
from tasks.reading.robustness import evaluate_readers, write_reader_tables
from tasks.reading.scoring import read_squad_v11, score_prediction_file
from tasks.reading.subject_buckets import score_dev_buckets, score_paraphrase_buckets
from tasks.reading.training_seeds import SeedRun, compare_over_seeds


def resolve_reader_model(model: str) -> Path:
    """Local directory of ``packaged:<name>``, a local path or a cached hub name."""
    from tasks.retrieval.encoders import resolve_model_path

    return resolve_model_path(model)


def train_reader_on_squad(train_file: Path, out_dir: Path, config: ReaderConfig,
                          checkpoint_dir: str | None = None, val_file: Path | None = None) -> dict:
    """Fine-tune ``config.model`` on a SQuAD v1.1 training file; save to ``out_dir``. With
    ``checkpoint_dir`` (a string: its checkpoints change while it runs and are not part of
    the task's cache key), a killed training resumes there."""
    from models.reader.api import train_reader

    examples = list(read_squad_v11(train_file).questions())
    val = list(read_squad_v11(val_file).questions()) if val_file else None
    train_reader(examples, config, out_dir, resolve_reader_model(config.model),
                 val_examples=val, checkpoint_dir=checkpoint_dir)
    return {"questions": len(examples), "out_dir": str(out_dir)}


def predict_squad_files(model_dir: str | Path, data_files: Mapping[str, Path], out_dir: Path,
                        batch_size: int = 64, device: str = "auto",
                        cpu_threads: int | None = None) -> dict[str, Path]:
    """``{name: SQuAD file}`` -> ``out_dir/<name>.json`` predictions ``{id: answer}`` (atomic).

    ``model_dir`` is a reader checkpoint or any HF QA model (resolved like ``config.model``);
    it runs with ``cpu_threads`` torch CPU threads (None: the machine's count, never the
    caller's setting).
    """
    import torch

    from models.reader.api import load_reader

    device = ("cuda" if torch.cuda.is_available() else "cpu") if device == "auto" else device
    reader = load_reader(resolve_reader_model(str(model_dir)), device=device,
                         bf16=device == "cuda")
    written = {}
    for name, path in data_files.items():
        questions = list(read_squad(path).questions())
        written[name] = write_predictions(Path(out_dir) / f"{name}.json",
                                          reader.answers(questions, batch_size, cpu_threads))
    return written


def score_squad_files(predictions: Mapping[str, Path], data_file: Path) -> dict[str, dict]:
    """``{reader: predictions file}`` on one SQuAD file -> ``{reader: ScoreReport dict}``."""
    return {reader: score_prediction_file(data_file, path).as_dict()
            for reader, path in predictions.items()}


def evaluate_reader_predictions(predictions: Mapping[str, Mapping[str, Path]],
                                set_files: Mapping[str, tuple[Path, Path]], metrics_path: Path,
                                report_path: Path, dev_scores: Mapping[str, Mapping] | None,
                                n_bootstrap: int = 1000, seed: int = 0,
                                confidence: float = 0.95,
                                dev_buckets: Mapping | None = None,
                                paraphrase_buckets: Mapping[str, Mapping] | None = None,
                                edit_groups: Mapping[str, Mapping] | None = None) -> dict:
    """Tables 1-2 from prediction files -> metrics JSON, Markdown, Prefect artifact."""
    metrics = evaluate_readers(predictions, set_files, n_bootstrap, seed, confidence)
    return write_reader_tables(metrics, metrics_path, report_path, dev_scores, dev_buckets,
                               paraphrase_buckets, edit_groups)


def compare_augmented_readers(before: Mapping[str, Path], after: Mapping[str, Mapping[str, Path]],
                              data_files: Mapping[str, Path], counts: Mapping[str, Mapping],
                              metrics_path: Path, report_path: Path,
                              added_tables: Mapping[str, Path] | None = None,
                              notes: tuple[str, ...] = (), n_bootstrap: int = 1000,
                              seed: int = 0, confidence: float = 0.95,
                              seed_runs: Mapping[int, SeedRun] | None = None) -> dict:
    """Tables 3-6 from prediction files -> metrics JSON, Markdown, Prefect artifact.

    ``seed_runs`` (reader training seed -> that seed's before and after prediction files,
    the main seed's included) adds the comparison over training seeds (``seeds`` in the
    metrics; :func:`tasks.reading.training_seeds.compare_over_seeds`).
    """
    metrics = compare_readers(before, after, data_files, counts, n_bootstrap, seed, confidence)
    if seed_runs:
        metrics["seeds"] = compare_over_seeds(seed_runs, data_files, confidence,
                                              n_bootstrap=n_bootstrap, bootstrap_seed=seed)
    return write_augmentation_tables(metrics, metrics_path, report_path, added_tables,
                                     notes=notes)


def retrieve_then_read_predictions(model_dir: Path, results_dirs: Mapping[str, Path],
                                   out_dir: Path, ks: list[int], per_relation: int, seed: int,
                                   batch_size: int = 64, mode: str = "eq-string",
                                   device: str = "auto", fusion: bool = False,
                                   fusion_grid: int = 21) -> dict:
    """The reader on each retriever's top-k passages of the sampled EntityQuestions test
    questions -> ``out_dir/<retriever>/top<k>.json`` (+ ``passages.json``, ``questions.json``;
    with ``fusion`` also ``top<k>_fused.json`` and ``fusion.json``). Returns the counts per
    retriever and k and how many (question, passage) pairs were read."""
    import torch

    from models.reader.api import load_reader

    sample = load_questions(results_dirs, per_relation, seed)
    device = ("cuda" if torch.cuda.is_available() else "cpu") if device == "auto" else device
    reader = load_reader(resolve_reader_model(str(model_dir)), device=device,
                         bf16=device == "cuda")
    spans = read_top_passages(reader, sample, max(ks), batch_size)
    counts = write_predictions_per_k(sample, spans, ks, out_dir, mode,  # type: ignore[arg-type]
                                     fusion=fusion, grid_points=fusion_grid)
    return {"out_dir": str(out_dir), "questions": len(sample.questions),
            "passages_read": len(spans), "counts": counts}


def evaluate_retrieve_then_read(out_dir: Path, retrievers: list[str], ks: list[int],
                                baseline: str, counts: Mapping[str, Mapping], metrics_path: Path,
                                report_path: Path, reader: str, n_bootstrap: int = 1000,
                                seed: int = 0, confidence: float = 0.95) -> dict:
    """Retrieve-then-read EM/recall tables from the prediction files -> JSON, Markdown."""
    metrics = evaluate_open_predictions(out_dir, retrievers, ks, baseline, counts,
                                        n_bootstrap=n_bootstrap, seed=seed,
                                        confidence=confidence)
    return write_open_tables(metrics, metrics_path, report_path, reader)


train_reader_task = artifact_task(train_reader_on_squad, outputs=("out_dir",),
                                  name="readers: train reader")
predict_task = artifact_task(predict_squad_files, outputs=("out_dir",),
                             name="readers: predict")
score_dev_task = artifact_task(score_squad_files, name="readers: score SQuAD dev")
dev_buckets_task = artifact_task(score_dev_buckets,
                                 name="readers: SQuAD dev per subject-frequency bucket")
paraphrase_buckets_task = artifact_task(
    score_paraphrase_buckets, name="readers: paraphrased set per subject-frequency bucket")
edit_groups_task = artifact_task(score_edit_groups,
                                 name="readers: paraphrased set by what the paraphrase changes")
evaluate_task = artifact_task(evaluate_reader_predictions,
                              outputs=("metrics_path", "report_path"),
                              name="readers: orig vs para tables")
augment_task = artifact_task(build_augmented_training, outputs=("out_dir",),
                             name="readers: augmented training data")
compare_augmented_task = artifact_task(compare_augmented_readers,
                                       outputs=("metrics_path", "report_path"),
                                       name="readers: before vs after augmentation")
rtr_predict_task = artifact_task(retrieve_then_read_predictions, outputs=("out_dir",),
                                name="retrieve-then-read: read top-k passages")
rtr_evaluate_task = artifact_task(evaluate_retrieve_then_read,
                                  outputs=("metrics_path", "report_path"),
                                  name="retrieve-then-read: EM tables")
