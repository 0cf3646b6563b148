"""The stage registry: every box of the study's DAG, declared once, in pipeline order.

A :class:`Stage` names its Prefect flow, the ``params.yaml`` sections it reads, the data it
reads and writes (paths in DVC's ``${paths.*}`` templating over params.yaml's base ``paths``),
its metrics and plots. From this list come ``dvc.yaml`` and ``prefect.yaml``
(``qastress dag write``), the ``qastress stage`` commands, the order in which
:func:`flows.study.study` runs the flows, and the flows listed by the HTML report. A stage's
code dependencies are not declared here: they are the project files its flow module imports,
transitively (:func:`tasks.pipeline.code_deps.code_deps`).

Adding a stage = one :class:`Stage` entry in :data:`STAGES` (where it runs in the study) +
``qastress dag write``; once a demo run has timed it (``results/study_timings.json``), its
``typical_s``.

Outputs under ``${paths.reports}``, ``${paths.plots}`` and ``${paths.metrics}`` are small
human-readable files: DVC tracks them with ``cache: false`` (kept in git, not in the DVC cache).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from tasks.pipeline.demo_world_parts import MANIFESTS, OUTPUTS

if TYPE_CHECKING:
    from tasks.config import Params

#: ``params`` value of a stage that reads every parameter (DVC: ``params.yaml:``).
ALL_PARAMS = ("params.yaml:",)
#: Output prefixes that DVC keeps out of its cache (``cache: false``).
UNCACHED_PREFIXES = ("${paths.reports}/", "${paths.plots}/", "${paths.metrics}/")
#: The flow of flows (``qastress run``): every stage below, in order.
STUDY_FLOW = "flows.study:study"
#: ``prefect.yaml`` deployments of the study: deployment (= profile) name -> description.
STUDY_DEPLOYMENTS = {"demo": "The whole study (main job) on the demo profile.",
                     "smoke": "The whole study on the seconds-scale smoke profile.",
                     "demo-large": "The whole study on the demo world at 5.3x (51,770 "
                                   "passages; over the demo's 15-minute budget)."}


def _always(params: Params) -> bool:
    return True


def _demo_world_only(params: Params) -> bool:
    return params.sources.world == "demo"


def _retrieve_then_read_enabled(params: Params) -> bool:
    return params.retrieve_then_read.enabled


def _augmentation_kind_configured(kind: str, params: Params) -> bool:
    return kind in params.readers.augmentation.kinds


@dataclass(frozen=True)
class Stage:
    """One box of the DAG: a Prefect flow run as one DVC stage."""

    name: str
    """DVC stage name (``snake_case``); ``qastress stage`` takes it with dashes."""
    flow: str
    """``module:attribute`` of the Prefect flow."""
    description: str
    """One line, for the deployment in ``prefect.yaml`` and the comment in ``dvc.yaml``."""
    params: tuple[str, ...]
    """Keys of params.yaml the stage reads (sections or dotted keys); :data:`ALL_PARAMS` = all."""
    deps: tuple[str, ...] = ()
    """Data it reads (code dependencies are derived, not listed)."""
    outs: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    plots: tuple[str, ...] = ()
    in_report: bool = False
    """Whether the HTML report has a section of this stage's outputs."""
    when: Callable[[Params], bool] = _always
    """Whether the study runs the stage for a configuration."""
    typical_s: float = 0.0
    """Its wall seconds in a demo run on 2 cores (bench/RESULTS.md, Session 27; the stages split
    since, train_reader / readers and the augmentation kinds / their comparison, share their
    former stage's seconds as their steps did in Session 29's base run). Only orders the
    stages ready at the same time in a concurrent study (the one with the longest way to the
    end goes first: :func:`tasks.pipeline.stage_graph.stage_priorities`); no number depends
    on it."""

    @property
    def command(self) -> str:
        """The ``qastress stage`` name (dashes)."""
        return self.name.replace("_", "-")

    @property
    def module(self) -> str:
        """The flow's module (``flows.retrieval``)."""
        return self.flow.partition(":")[0]

    @property
    def attribute(self) -> str:
        """The flow object's name in its module."""
        return self.flow.partition(":")[2]

    @property
    def entrypoint(self) -> str:
        """Prefect's ``path/to/module.py:flow`` form."""
        return f"{self.module.replace('.', '/')}.py:{self.attribute}"


def _reports(*names: str) -> tuple[str, ...]:
    return tuple(f"${{paths.reports}}/{name}" for name in names)


def _metrics(*names: str) -> tuple[str, ...]:
    return tuple(f"${{paths.metrics}}/{name}.json" for name in names)


def _plots(*names: str) -> tuple[str, ...]:
    return tuple(f"${{paths.plots}}/{name}" for name in names)


_RAW = "${paths.data}/raw"
_RETRIEVAL_METRICS = _metrics("retrieval_bm25", "retrieval_dense", "retrieval_hybrid",
                              "retrieval_dpr-nq",
                              "retrieval_comparison", "retrieval_buckets")
_FIGURES = _plots("retrieval_accuracy_vs_k.png", "retrieval_buckets.png")


def _raw(part: str) -> tuple[str, ...]:
    """What one half of the demo world writes under the raw root (``tasks.demo.generate``):
    its directories and its manifest."""
    return tuple(f"{_RAW}/{name}" for name in (*OUTPUTS[part], MANIFESTS[part]))


def _augmented(kind: str) -> tuple[str, ...]:
    """What one augmentation kind's stage writes (``flows/augment_reader.py``)."""
    return (f"${{paths.data}}/reader_augmentation/{kind}",
            f"${{paths.results}}/reader_augmentation/{kind}")


def _augmentation_stage(kind: str, description: str, typical_s: float) -> Stage:
    """The stage of one augmentation kind (``flows/augment_reader.py``). It reads the training
    questions and SQuAD dev, the paraphrase stage's PPDB table, paraphraser and offline
    taggers, and the paraphrased sets; the study runs it when the kind is configured."""
    return Stage(
        name=f"augment_{kind}", flow=f"flows.augment_reader:augment_{kind}",
        description=description, typical_s=typical_s,
        params=("profile", "profiles", "sources", "demo_world", "readers", "paraphrase"),
        deps=(f"{_RAW}/squad", "${paths.data}/paraphrase", "${paths.data}/paraphrasing-squad"),
        outs=_augmented(kind),
        when=partial(_augmentation_kind_configured, kind))


#: The study's DAG, in the order the study runs it.
STAGES: tuple[Stage, ...] = (
    Stage(
        name="demo_world", flow="flows.demo_world:demo_world",
        description="Write the synthetic demo world's encyclopedia (T-REx, passages, NQ) in "
                    "the real formats.",
        typical_s=11,
        params=("profile", "profiles", "demo_world"),
        outs=_raw("retrieval"),
        when=_demo_world_only,
    ),
    Stage(
        name="demo_reading_world", flow="flows.demo_reading_world:demo_reading_world",
        description="Write the demo world's reading sources (SQuAD, PPDB, Quora, WikiAnswers) "
                    "in the real formats.",
        typical_s=2,
        params=("profile", "profiles", "demo_world"),
        outs=_raw("reading"),
        when=_demo_world_only,
    ),
    Stage(
        name="bm25_index", flow="flows.bm25_index:bm25_index",
        description="Lucene BM25 index of the passages (Pyserini).",
        typical_s=7,
        params=("profile", "profiles", "retrieval.bm25"),
        deps=(f"{_RAW}/wikipedia",),
        outs=("${paths.data}/indexes/collections", "${paths.data}/indexes/bm25"),
    ),
    Stage(
        name="entity_questions", flow="flows.entity_questions:entity_questions",
        description="EntityQuestions from the knowledge-base triples.",
        typical_s=39,
        params=("profile", "profiles", "sources", "entity_questions"),
        deps=(f"{_RAW}/trex", f"{_RAW}/wikidata", f"{_RAW}/hyperlinks", f"{_RAW}/nq",
              f"{_RAW}/wikipedia", "${paths.data}/indexes/bm25"),
        outs=("${paths.data}/entityquestions", *_reports("entityquestions_summary.md")),
        metrics=_metrics("entity_questions"),
        in_report=True,
    ),
    Stage(
        name="train_retriever", flow="flows.train_retriever:train_retriever",
        description="DPR retriever trained with Lightning (MLM-pre-trained small BERT offline).",
        typical_s=187,
        params=("profile", "profiles", "sources", "retriever_training"),
        deps=(f"{_RAW}/wikipedia", f"{_RAW}/nq", "${paths.data}/entityquestions/dpr"),
        outs=("${paths.data}/models/mlm-bert", "${paths.data}/models/retriever"),
        metrics=_metrics("retriever_training"),
        in_report=True,
    ),
    Stage(
        name="retrieval", flow="flows.retrieval:retrieval",
        description="BM25, dense and hybrid retrieval with top-k accuracy.",
        typical_s=104,
        params=("profile", "profiles", "retrieval", "entity_questions.n_buckets",
                "entity_questions.bucket_order"),
        deps=(f"{_RAW}/wikipedia", "${paths.data}/indexes/bm25", "${paths.data}/models/retriever",
              "${paths.data}/entityquestions/dataset",
              "${paths.data}/entityquestions/questions.parquet"),
        outs=("${paths.data}/indexes/dense", "${paths.results}/retrieval",
              *_reports("retrieval_bm25_topk.md", "retrieval_dense_topk.md",
                        "retrieval_hybrid_topk.md", "retrieval_dpr-nq_topk.md",
                        "retrieval_comparison.md"),
              *_FIGURES),
        metrics=_RETRIEVAL_METRICS,
        plots=_plots("retrieval_accuracy_vs_k.csv", "retrieval_buckets.csv"),
        in_report=True,
    ),
    Stage(
        name="retriever_experiments",
        flow="flows.retriever_experiments:retriever_experiments",
        description="Fine-tuning experiments: pattern vs entity, single vs multi-task, t-SNE.",
        typical_s=170,
        params=("profile", "profiles", "sources", "retrieval", "retriever_training.dpr",
                "retriever_experiments"),
        deps=(f"{_RAW}/wikipedia", f"{_RAW}/nq", "${paths.data}/indexes/bm25",
              "${paths.data}/indexes/dense", "${paths.data}/models/retriever",
              "${paths.data}/entityquestions/dataset", "${paths.data}/entityquestions/dpr"),
        outs=("${paths.data}/experiments/retriever", "${paths.results}/retriever_experiments",
              *_reports("retriever_experiments.md"), *_plots("retriever_tsne.png")),
        metrics=_metrics("retriever_experiments"),
        plots=_plots("retriever_tsne.csv"),
        in_report=True,
    ),
    Stage(
        name="specialised_encoders", flow="flows.specialised_encoders:specialised_encoders",
        description="Table 4: one passage index, a specialised question encoder per relation.",
        typical_s=26,
        params=("profile", "profiles", "specialised_encoders", "retriever_training",
                "retrieval.dense", "retrieval.ks", "retrieval.headline_k",
                "retrieval.has_answer_mode", "entity_questions.relations"),
        deps=(f"{_RAW}/wikipedia", "${paths.data}/models/mlm-bert",
              "${paths.data}/models/retriever", "${paths.data}/indexes/dense",
              "${paths.data}/entityquestions/dataset", "${paths.data}/entityquestions/dpr",
              "${paths.data}/entityquestions/work"),
        outs=("${paths.data}/specialised", *_reports("specialised_encoders.md")),
        metrics=_metrics("specialised_encoders"),
        in_report=True,
    ),
    Stage(
        name="paraphrase", flow="flows.paraphrase:paraphrase",
        description="Paraphrased SQuAD test sets (PPDB suggestions, paraphraser, filter).",
        typical_s=283,
        params=("profile", "profiles", "sources", "demo_world", "paraphrase"),
        deps=(f"{_RAW}/ppdb", f"{_RAW}/squad", f"{_RAW}/quora", f"{_RAW}/wikianswers"),
        outs=("${paths.data}/paraphrase", "${paths.data}/paraphrasing-squad",
              "${paths.results}/paraphrase", *_reports("paraphrase.md")),
        metrics=_metrics("paraphrase"),
        in_report=True,
    ),
    Stage(
        name="paraphrased_retrieval",
        flow="flows.paraphrased_retrieval:paraphrased_retrieval",
        description="Retrieval on original vs paraphrased questions.",
        typical_s=15,
        params=("profile", "profiles", "retrieval"),
        deps=("${paths.data}/paraphrasing-squad", "${paths.data}/models/retriever"),
        outs=_reports("retrieval_paraphrased.md"),
        metrics=_metrics("retrieval_paraphrased"),
        in_report=True,
    ),
    Stage(
        name="train_reader", flow="flows.train_reader:train_reader",
        description="Extractive reader fine-tuned with Lightning on the SQuAD training file.",
        typical_s=98,
        params=("profile", "profiles", "sources", "readers.model"),
        deps=(f"{_RAW}/squad",),
        outs=("${paths.data}/readers",),
    ),
    Stage(
        name="readers", flow="flows.readers:readers",
        description="Extractive readers: EM/F1 on original vs paraphrased questions.",
        typical_s=35,
        params=("profile", "profiles", "sources", "readers", "entity_questions.bucket_order",
                "entity_questions.hyperlink_key"),
        deps=(f"{_RAW}/squad", f"{_RAW}/hyperlinks", "${paths.data}/paraphrasing-squad",
              "${paths.data}/readers"),
        outs=("${paths.results}/readers", *_reports("readers.md")),
        metrics=_metrics("readers"),
        in_report=True,
    ),
    Stage(
        name="retrieve_then_read", flow="flows.retrieve_then_read:retrieve_then_read",
        description="Retrieve-then-read EM on EntityQuestions: the reader on each top-k.",
        typical_s=21,
        params=("profile", "profiles", "retrieve_then_read", "readers.model",
                "retrieval.retrievers", "retrieval.has_answer_mode"),
        deps=("${paths.results}/retrieval", "${paths.data}/readers"),
        outs=("${paths.results}/retrieve_then_read", *_reports("retrieve_then_read.md")),
        metrics=_metrics("retrieve_then_read"),
        in_report=True,
        when=_retrieve_then_read_enabled,
    ),
    _augmentation_stage(
        "non_adversarial", typical_s=155,
        description="Training questions paraphrased with PPDB suggestions; reader re-trained."),
    _augmentation_stage(
        "adversarial", typical_s=120,
        description="Training questions paraphrased with context suggestions; reader re-trained."),
    Stage(
        name="reader_augmentation", flow="flows.reader_augmentation:reader_augmentation",
        description="Readers re-trained on paraphrased training questions: before vs after.",
        typical_s=2,
        params=("profile", "profiles", "sources", "readers", "paraphrase"),
        deps=(f"{_RAW}/squad", "${paths.data}/paraphrasing-squad", "${paths.data}/readers",
              "${paths.results}/readers", *_augmented("non_adversarial"),
              *_augmented("adversarial")),
        outs=("${paths.data}/reader_augmentation/seeds",
              "${paths.results}/reader_augmentation/before",
              "${paths.results}/reader_augmentation/seeds",
              *_reports("reader_augmentation.md")),
        metrics=_metrics("reader_augmentation"),
        in_report=True,
    ),
    Stage(
        name="report", flow="flows.report:report",
        description="The static HTML report of every flow that ran.",
        typical_s=1,
        params=ALL_PARAMS,
        deps=(_RAW, *_reports("entityquestions_summary.md"), *_RETRIEVAL_METRICS, *_FIGURES,
              *_metrics("retriever_training", "retriever_experiments"),
              *_plots("retriever_tsne.png"),
              *_reports("paraphrase.md"), *_metrics("paraphrase", "retrieval_paraphrased",
                                                    "readers", "reader_augmentation",
                                                    "retrieve_then_read"),
              *_metrics("specialised_encoders")),
        outs=_reports("report.html"),
    ),
)

def dvc_plots(retrievers: Sequence[str]) -> tuple[dict[str, Any], ...]:
    """Figures for ``dvc plots show`` (dvc.yaml's top-level ``plots``), paths as in params.yaml.
    The top-k curve has one column per evaluated retriever: ``retrievers`` (DVC fails on a
    column that the CSV lacks)."""
    return (
        {"EntityQuestions top-k retrieval accuracy (macro average, %)": {
            "template": "linear", "x": "k",
            "y": {"plots/retrieval_accuracy_vs_k.csv": list(retrievers)}}},
        # Figure 1 data, long format (set, relation, bucket, retriever, accuracy, questions): a
        # point per row (scatter, since rows of several series share x); the PNG has one panel
        # per relation and one pooled over them.
        {"EntityQuestions top-k accuracy per subject-frequency bucket (Figure 1, %)": {
            "template": "scatter", "x": "bucket",
            "y": {"plots/retrieval_buckets.csv": "accuracy"}}},
    )


def stage(name: str) -> Stage:
    """The stage called ``name`` (snake_case or the dashed command name)."""
    for candidate in STAGES:
        if name in (candidate.name, candidate.command):
            return candidate
    raise KeyError(f"unknown stage {name!r}; expected one of {[s.command for s in STAGES]}")


def flows_by_command() -> dict[str, tuple[str, str]]:
    """``qastress stage`` names -> (module, flow attribute); ``study`` first."""
    module, _, attribute = STUDY_FLOW.partition(":")
    return {"study": (module, attribute),
            **{s.command: (s.module, s.attribute) for s in STAGES}}


def reported_flows() -> tuple[tuple[str, str], ...]:
    """(flow, command to run it) of the stages the HTML report has a section for, in order."""
    return tuple((s.command, f"qastress stage {s.command}") for s in STAGES if s.in_report)
