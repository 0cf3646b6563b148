"""Fine-tune a trained DPR pair (e.g. DPR-NQ) on DPR training JSON: the reusable step of the
retriever experiments (Tables 2-4 of Sciavolino et al., 2021).

```python
from tasks.training.finetune import finetune, finetune_config, training_set_size

size = training_set_size(question_file, dpr_file)          # 0 -> the row says "not run"
config = finetune_config(params.retriever_training.dpr, cfg.finetune, freeze="onlyQ")
summary = finetune({"P19": [dpr_file]}, layout.trained_retriever("dpr-nq"), out_dir,
                   str(checkpoints), config)                 # out_dir: a saved DPR pair
```

:func:`finetune` starts each encoder from its own side of the saved pair
(:meth:`models.retriever.network.BiEncoder.from_saved_pair`), trains on the union of named
training sets (``{"P19": [...], "nq": [...]}``: multi-task = two sets) and saves the pair like
the train-retriever flow does, so :func:`tasks.training.retriever.encoder_spec` evaluates it.
With ``freeze="onlyQ"`` the passage encoder is saved bit-identical, so the baseline's passage
index stays valid (:func:`check_passage_encoder_identical` proves it tensor by tensor):
:func:`tasks.retrieval.frozen_index.retrieve_frozen_index` searches it with the new question
encoder. :func:`finetune_task` is the cached Prefect task; ``flows._finetune.finetune_pair``
is the one fine-tune step of Tables 2-4.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks.io.dpr import iter_dpr_examples
from tasks.io.entityquestions import read_eq_file
from tasks.orchestration import artifact_task
from tasks.retriever_config import RetrieverTrainConfig
from tasks.retriever_experiments_config import FinetuneOverrides
from tasks.specialised_config import FineTuneConfig

#: The fields of ``FinetuneOverrides`` that override ``RetrieverTrainConfig`` fields.
_OVERRIDDEN = ("max_epochs", "max_steps", "lr", "batch_size", "warmup_steps")


@dataclass(frozen=True)
class TrainingSetSize:
    """Questions of a training set file and the DPR examples made of them (those with a
    positive passage): ``examples == 0`` means the fine-tune cannot run."""

    questions: int
    examples: int

    @property
    def without_positive(self) -> int:
        """Questions left out of the DPR file (no passage mentions subject and answer)."""
        return self.questions - self.examples


def training_set_size(question_file: Path, dpr_file: Path) -> TrainingSetSize:
    """Size of one training set: its EntityQuestions file and its DPR training JSON.

    An empty (or absent) question file is a set of 0; questions without their DPR file are an
    error naming it (the entity-questions flow writes one for every non-empty train/dev file
    when ``dpr_training`` is on).
    """
    questions = len(read_eq_file(question_file)) if Path(question_file).is_file() else 0
    if questions == 0:
        return TrainingSetSize(0, 0)
    if not Path(dpr_file).is_file():
        raise FileNotFoundError(f"{dpr_file}: no DPR training JSON for the {questions} questions "
                                f"of {question_file} (run the entity-questions flow with "
                                "dpr_training: true)")
    examples = sum(1 for e in iter_dpr_examples(dpr_file) if e.positive_ctxs)
    return TrainingSetSize(questions, examples)


def finetune_config(base: RetrieverTrainConfig,
                    overrides: FinetuneOverrides | FineTuneConfig, freeze: str
                    ) -> RetrieverTrainConfig:
    """``base`` (``retriever_training.dpr``) with the fine-tuning overrides (Tables 2-3's
    ``retriever_experiments.finetune`` or Table 4's ``specialised_encoders`` steps: fields left
    ``None`` or absent keep ``base``) and ``freeze`` (``full`` / ``onlyQ`` / ``onlyP``),
    validated again (a pair, never shared; pooled as ``base``, the config that trained the
    baseline pair: a pair saved with another pooling is refused when the fine-tune starts)."""
    update: dict[str, Any] = {k: getattr(overrides, k) for k in _OVERRIDDEN
                              if getattr(overrides, k, None) is not None}
    if overrides.max_steps is None:
        update["max_steps"] = None
    update.update(freeze=freeze, shared=False)
    return RetrieverTrainConfig.model_validate({**base.model_dump(), **update})


def load_training_sets(train_sets: Mapping[str, Sequence[Path]], hard_negatives: int,
                       other_negatives: int = 0,
                       max_questions: Mapping[str, int | None] | None = None,
                       seed: int = 0) -> tuple[list[Any], dict[str, int]]:
    """The bi-encoder samples of every named set (``max_questions[name]``: a seeded sample of
    that many; None: all), concatenated in set order, and the count taken from each set.

    A set without any example is an error naming it (check :func:`training_set_size` first).
    """
    from models.retriever import load_samples

    samples: list[Any] = []
    counts: dict[str, int] = {}
    for name, files in train_sets.items():
        try:
            items = load_samples(list(files), hard_negatives, other_negatives)
        except ValueError as exc:
            raise ValueError(f"training set {name!r}: {exc}") from None
        cap = (max_questions or {}).get(name)
        if cap is not None and cap < len(items):
            items = random.Random(f"{seed}:{name}").sample(items, cap)
        counts[name] = len(items)
        samples.extend(items)
    return samples, counts


def finetune(train_sets: Mapping[str, Sequence[Path]], init_model: Path, out_dir: Path,
             checkpoint_dir: str, config: RetrieverTrainConfig,
             max_questions: Mapping[str, int | None] | None = None) -> dict[str, Any]:
    """Fine-tune the DPR pair saved at ``init_model`` on the named training sets; save the
    pair to ``out_dir`` (atomically; resumable from ``checkpoint_dir``).

    Returns steps and final losses (deterministic: it is cached), ``train_questions`` and
    ``sources`` (questions taken from each set: the multi-task count check).
    """
    from models.retriever import train_retriever

    samples, counts = load_training_sets(train_sets, config.hard_negatives,
                                         config.other_negatives, max_questions, config.seed)
    state = train_retriever(samples, Path(init_model), config, Path(out_dir),
                            Path(checkpoint_dir),
                            extra_args={"train_sets": {k: [str(p) for p in v]
                                                       for k, v in train_sets.items()},
                                        "sources": counts, "fine_tuned_from": str(init_model)})
    keys = ("global_step", "epochs", "final_train_loss")
    return {**{k: state[k] for k in keys if k in state}, "freeze": config.freeze,
            "train_questions": len(samples), "sources": counts}


def encoder_tensors(model_dir: Path) -> dict[str, Any]:
    """Every tensor of a saved model directory's ``*.safetensors`` files (numpy arrays)."""
    from safetensors.numpy import load_file

    files = sorted(Path(model_dir).glob("*.safetensors"))
    if not files:
        raise FileNotFoundError(f"{model_dir}: no *.safetensors weights")
    tensors: dict[str, Any] = {}
    for path in files:
        tensors.update(load_file(str(path)))
    return tensors


def check_passage_encoder_identical(base_ctx_dir: Path, tuned_ctx_dir: Path) -> int:
    """Raise unless every tensor of ``tuned_ctx_dir`` equals ``base_ctx_dir``'s bit for bit
    (same names, dtypes, shapes and bytes); return the number of tensors compared."""
    base, tuned = encoder_tensors(base_ctx_dir), encoder_tensors(tuned_ctx_dir)
    if set(base) != set(tuned):
        raise ValueError(f"{tuned_ctx_dir}: passage encoder tensors "
                         f"{sorted(set(base) ^ set(tuned))[:5]} differ in name from "
                         f"{base_ctx_dir}")
    for name, array in base.items():
        other = tuned[name]
        if (array.dtype != other.dtype or array.shape != other.shape
                or array.tobytes() != other.tobytes()):
            raise ValueError(f"{tuned_ctx_dir}: passage encoder tensor {name!r} differs from "
                             f"{base_ctx_dir} (was it trained with freeze onlyQ?): the shared "
                             "passage index would be stale")
    return len(base)


finetune_task = artifact_task(finetune, outputs=("out_dir",), name="fine-tune DPR pair")
