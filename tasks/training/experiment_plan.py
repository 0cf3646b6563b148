"""The fine-tunes of the retriever experiments, planned from the configuration, and their sizes.

- Table 2 (pattern vs entity): one job per relation x template x mode, trained on the
  relation's no-overlap train set rendered with its own template (``test``) or its
  ``_similar`` template;
- Table 3 (single vs multi-task): per relation, its train split alone (``single``, also the
  "after" model of Figure 2) and mixed with the NQ-style training data (``multi``).

A job whose training set has no example (no question, or none with a positive passage) is
kept, with its size, so the table says "0 training questions: not run" instead of dropping it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tasks.io.dpr import iter_dpr_examples
from tasks.questions.writers import main_file, no_overlap_file, similar_file
from tasks.retriever_experiments_config import RetrieverExperimentsConfig
from tasks.training.finetune import TrainingSetSize, training_set_size

#: The name of the NQ-style training set in a multi-task job's ``train_sets``.
NQ = "nq"


@dataclass(frozen=True)
class Job:
    """One fine-tune: where its training sets are and which table row it fills.

    ``variant``: the template (``test`` / ``similar``) of a Table 2 job, ``single`` / ``multi``
    of a Table 3 job. ``question_files[name]``: the EntityQuestions file of a training set
    (``None`` for the NQ-style data, which has no question file of its own).
    """

    name: str
    table: str
    relation: str
    variant: str
    mode: str
    train_sets: dict[str, list[Path]]
    question_files: dict[str, Path | None]
    max_questions: dict[str, int | None] = field(default_factory=dict)


def job_name(table: str, relation: str, variant: str, mode: str) -> str:
    """``ft-p19-similar-onlyq`` (Table 2) / ``mt-p19-multi`` (Table 3): a retriever name."""
    prefix = "ft" if table == "pattern" else "mt"
    suffix = f"-{mode.lower()}" if table == "pattern" else ""
    return f"{prefix}-{relation.lower()}-{variant}{suffix}"


def pattern_jobs(cfg: RetrieverExperimentsConfig, dataset_dir: Path, dpr_dir: Path) -> list[Job]:
    """Table 2's jobs (none when disabled), relation x template x mode in config order."""
    if not cfg.pattern.enabled:
        return []
    jobs = []
    for relation in cfg.pattern.relations:
        for template in cfg.pattern.templates:
            relative = (no_overlap_file(relation, "train") if template == "test"
                        else similar_file(relation, "train"))
            for mode in cfg.pattern.modes:
                jobs.append(Job(
                    name=job_name("pattern", relation, template, mode), table="pattern",
                    relation=relation, variant=template, mode=mode,
                    train_sets={relation: [Path(dpr_dir) / relative]},
                    question_files={relation: Path(dataset_dir) / relative},
                    max_questions={relation: cfg.finetune.max_train_questions}))
    return jobs


def multitask_jobs(cfg: RetrieverExperimentsConfig, dataset_dir: Path, dpr_dir: Path,
                   nq_train: Path) -> list[Job]:
    """Table 3's jobs (single, multi per relation; full mode), plus the single-relation job
    Figure 2 needs when Table 3 does not already have it."""
    relations = list(cfg.multitask.relations) if cfg.multitask.enabled else []
    jobs = []
    for relation in relations:
        relative = main_file(relation, "train")
        own = {relation: [Path(dpr_dir) / relative]}
        files: dict[str, Path | None] = {relation: Path(dataset_dir) / relative}
        cap = cfg.finetune.max_train_questions
        jobs.append(Job(
            name=job_name("multitask", relation, "single", "full"), table="multitask",
            relation=relation, variant="single", mode="full", train_sets=own,
            question_files=files, max_questions={relation: cap}))
        jobs.append(Job(
            name=job_name("multitask", relation, "multi", "full"), table="multitask",
            relation=relation, variant="multi", mode="full",
            train_sets={**own, NQ: [Path(nq_train)]}, question_files={**files, NQ: None},
            max_questions={relation: cap, NQ: cfg.multitask.max_nq_questions}))
    if cfg.tsne.enabled and cfg.tsne.relation not in relations:
        relation = cfg.tsne.relation
        relative = main_file(relation, "train")
        jobs.append(Job(
            name=job_name("multitask", relation, "single", "full"), table="figure2",
            relation=relation, variant="single", mode="full",
            train_sets={relation: [Path(dpr_dir) / relative]},
            question_files={relation: Path(dataset_dir) / relative},
            max_questions={relation: cfg.finetune.max_train_questions}))
    return jobs


def dpr_file_size(path: Path) -> TrainingSetSize:
    """Examples of a DPR training JSON (the NQ-style data) and those with a positive."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"{path}: DPR training JSON not found (sources.nq_train)")
    total = positives = 0
    for example in iter_dpr_examples(path):
        total += 1
        positives += bool(example.positive_ctxs)
    return TrainingSetSize(total, positives)


def job_sizes(job: Job) -> dict[str, TrainingSetSize]:
    """Size of each training set of a job, before any cap."""
    sizes = {}
    for name, files in job.train_sets.items():
        question_file = job.question_files.get(name)
        if question_file is None:
            found = [dpr_file_size(f) for f in files]
            sizes[name] = TrainingSetSize(sum(s.questions for s in found),
                                          sum(s.examples for s in found))
        else:
            sizes[name] = training_set_size(question_file, files[0])
    return sizes


def runnable(sizes: dict[str, TrainingSetSize]) -> bool:
    """A job runs only when every one of its training sets has an example."""
    return all(size.examples > 0 for size in sizes.values())


def not_run_reason(sizes: dict[str, TrainingSetSize]) -> str:
    """``"0 training questions: not run"`` (naming the empty set when there are several)."""
    empty = [name for name, size in sizes.items() if size.examples == 0]
    parts = []
    for name in empty:
        size = sizes[name]
        detail = (f" ({size.questions} without a positive passage)" if size.questions else "")
        parts.append((f"{name}: " if len(sizes) > 1 else "") + f"0 training questions{detail}")
    return "; ".join(parts) + ": not run"


def capped(sizes: dict[str, TrainingSetSize], caps: dict[str, int | None]) -> dict[str, int]:
    """Training questions a job will take from each set (examples, at most the cap)."""
    return {name: min(size.examples, caps.get(name) or size.examples)
            for name, size in sizes.items()}


def unique(names: Sequence[str]) -> list[str]:
    """Names in first-seen order without repeats."""
    return list(dict.fromkeys(names))
