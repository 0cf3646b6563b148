"""The ``readers`` section of the configuration (Gan & Ng, 2019): the reader trained and
evaluated on original vs paraphrased questions (Tables 1-2) and its re-training on augmented
training questions (Tables 3-6), pydantic over ``params.yaml``; embedded in
:class:`tasks.config.Params`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from tasks.config_section import Section
from tasks.reader_config import ReaderConfig


class ReaderAugmentationConfig(Section):
    """Gan & Ng (2019), Tables 3-6: paraphrase the reader's training questions
    (``sources.squad_train``) with the paraphrase flow's paraphraser, add ``n_augmented`` of
    them to the training file and re-train ``readers.model`` on original + augmented.

    ``kinds``: ``non_adversarial`` = PPDB suggestions, kept above
    ``paraphrase.similarity.augmentation``; ``adversarial`` = context suggestions (Flair NER +
    chunking) kept above ``paraphrase.similarity.adversarial_augmentation``. One re-trained
    reader per kind. ``max_source_questions`` paraphrases only the first training questions
    (None: all; the paper paraphrases all and samples 25,000). ``world_raters`` (demo world
    only) also filters the candidates above the bar through the world raters.
    """

    kinds: tuple[Literal["non_adversarial", "adversarial"], ...] = (
        "non_adversarial", "adversarial")
    n_augmented: int = Field(25_000, ge=1, description="paraphrased questions added per kind")
    per_question: int = Field(1, ge=1, description="paraphrases of one training question, "
                              "at most")
    max_source_questions: int | None = Field(None, ge=1, description="training questions "
                                             "paraphrased (first N; None: all)")
    seed: int = 2019
    world_raters: bool = Field(False, description=(
        "demo world only: also keep only the paraphrases the world raters accept "
        "(tasks/demo/raters.py; paraphrase.raters, paraphrase.min_rating), as the paraphrased "
        "test sets do. The paper did not rate its augmentation data"))
    evaluate_released: bool = Field(True, description="also evaluate on readers.released_sets")
    extra_seeds: tuple[int, ...] = Field((), description=(
        "reader training seeds besides readers.model.seed: the reader before augmentation and "
        "every re-trained one are trained again with each (same data, same settings), and the "
        "gains are summarised over all seeds (mean, sd, t-interval): the bootstrap CIs cover "
        "the questions, not the training draw (not in the paper; each seed costs two reader "
        "trainings, ~3 min on the demo profile)"))


class ReadersConfig(Section):
    """Extractive readers on original vs paraphrased SQuAD questions (Gan & Ng, 2019, Tables
    1-2): one reader trained on ``sources.squad_train`` (``model``), plus already fine-tuned
    QA checkpoints evaluated as they are (``pretrained``: local dirs or cached hub names).

    ``released_sets`` (relative to the project root unless absolute) is the directory of the
    released ``{dev,adv}_{orig,para}.json``; skipped when absent or None.
    """

    model: ReaderConfig = ReaderConfig()
    pretrained: tuple[str, ...] = ()
    evaluate_dev: bool = Field(True, description="also score sources.squad_dev")
    released_sets: str | None = "../shared/data/paraphrasing-squad"
    n_bootstrap: int = Field(1000, ge=1)
    bootstrap_seed: int = 0
    confidence: float = Field(0.95, gt=0.0, lt=1.0)
    subject_buckets: int = Field(4, ge=1, description="SQuAD dev buckets of subject frequency")
    subject_bucket_weight: Literal["questions", "hyperlinks"] = Field(
        "questions", description="cut into equal numbers of questions, or of cumulative "
        "hyperlinks (EntityQuestions)")
    augmentation: ReaderAugmentationConfig = ReaderAugmentationConfig()

    @model_validator(mode="after")
    def _distinct_seeds(self) -> ReadersConfig:
        seeds = (self.model.seed, *self.augmentation.extra_seeds)
        repeated = sorted({s for s in seeds if seeds.count(s) > 1})
        if repeated:
            raise ValueError(
                f"readers.augmentation.extra_seeds {list(self.augmentation.extra_seeds)} repeats "
                f"seed(s) {repeated} (readers.model.seed is {self.model.seed}): each training "
                "seed may appear once")
        return self
