"""Retriever training as plain functions (the flow wraps each in a cached task).

Passages -> small BERT by masked-language modelling (when no ``init_model`` is given) -> DPR
bi-encoder on DPR training JSON (NQ-style, or the EntityQuestions relations) -> saved encoders
+ a metrics JSON. :func:`trained_encoder` returns what the dense retriever needs to evaluate
the trained pair (the hook for the retrieval core).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tasks.io.atomic import write_json
from tasks.io.errors import MissingInputError
from tasks.io.passages import iter_passages


def passage_pairs(passages_tsv: Path, limit: int | None = None) -> list[tuple[str, str]]:
    """``(title, text)`` of the first ``limit`` passages (all when None)."""
    pairs: list[tuple[str, str]] = []
    for passage in iter_passages(passages_tsv):
        if limit is not None and len(pairs) >= limit:
            break
        pairs.append((passage.title, passage.text))
    if not pairs:
        raise ValueError(f"{passages_tsv}: no passages to pre-train on")
    return pairs


def pretrain_small_bert(passages_tsv: Path, out_dir: Path, config: Any) -> dict[str, Any]:
    """Pre-train the small BERT of ``config`` (``models.mlm.MlmConfig``) on the passages;
    save it (``BertForMaskedLM`` + tokenizer) to ``out_dir``; return step count and loss."""
    from models.mlm import MlmConfig, pretrain_mlm
    from tasks.retrieval.encoders import resolve_model_path

    config = config if isinstance(config, MlmConfig) else MlmConfig.model_validate(config)
    pairs = passage_pairs(Path(passages_tsv), config.max_passages)
    state = pretrain_mlm(pairs, config, out_dir, resolve_model_path(config.tokenizer))
    return _summary(state)


def relation_training_files(dpr_dir: Path, relations: Sequence[str], split: str
                            ) -> list[Path]:
    """The EntityQuestions DPR training JSON of ``relations`` (``{dpr_dir}/{split}/{R}.{split}
    .json``); a missing relation file or no relation at all is an error naming it."""
    if not relations:
        raise ValueError("no relations selected for retriever training (the relation set is "
                         "empty)")
    from tasks.questions.writers import main_file

    files = []
    for relation in relations:
        path = Path(dpr_dir) / main_file(relation, split)
        if not path.is_file():
            raise MissingInputError(f"relation {relation}: no DPR training file {path} (run "
                                    "the entity-questions flow with dpr_training: true)")
        files.append(path)
    return files


def train_dpr(train_files: Sequence[Path], dev_files: Sequence[Path], init_model: Path | str,
              out_dir: Path, checkpoint_dir: Path | str, config: Any,
              max_train_questions: int | None = None) -> dict[str, Any]:
    """Train the bi-encoder of ``config`` (``models.retriever.RetrieverTrainConfig``) from
    ``init_model`` (a BERT-family model, or a saved DPR pair) on ``train_files`` (validation
    loss on ``dev_files``), resuming from ``checkpoint_dir``; save it to ``out_dir``; return
    the trainer state summary."""
    from models.retriever import RetrieverTrainConfig, load_samples, train_retriever
    from tasks.retrieval.encoders import resolve_model_path

    config = (config if isinstance(config, RetrieverTrainConfig)
              else RetrieverTrainConfig.model_validate(config))
    train = load_samples(list(train_files), config.hard_negatives, config.other_negatives)
    if max_train_questions is not None:
        train = train[:max_train_questions]
    val = (load_samples(list(dev_files), config.hard_negatives, config.other_negatives)
           if dev_files else None)
    from models.retriever.network import is_saved_pair

    # a saved DPR pair starts each side from its own encoder (e.g. onlyQ fine-tuning)
    init_dir = (Path(init_model).resolve() if is_saved_pair(init_model)
                else resolve_model_path(str(init_model)))
    state = train_retriever(train, init_dir, config, out_dir, Path(checkpoint_dir), val=val,
                            extra_args={"train_files": [str(p) for p in train_files],
                                        "dev_files": [str(p) for p in dev_files]})
    return {**_summary(state), "train_questions": len(train),
            "val_questions": len(val or [])}


def encoder_spec(out_dir: str | Path, max_length: int | None = None,
                 name: str | None = None) -> Any:
    """The :class:`~tasks.retrieval.encoders.EncoderSpec` of a retriever saved by
    :func:`models.retriever.export.save_biencoder`: the hook for
    evaluating it with the dense retriever (vectors are not normalised: DPR's dot product)."""
    from models.retriever.export import CTX_DIR, QUESTION_DIR, SHARED_DIR, TRAINING_ARGS_FILE
    from tasks.retrieval.encoders import resolve_encoder_spec

    out_dir = Path(out_dir)
    args_file = out_dir / TRAINING_ARGS_FILE
    if not args_file.is_file():
        raise FileNotFoundError(f"{out_dir}: not a saved retriever ({TRAINING_ARGS_FILE} is "
                                "missing)")
    args = json.loads(args_file.read_text(encoding="utf-8"))
    length = max_length or int(args["max_length"])
    name = name or out_dir.name
    if (out_dir / SHARED_DIR).is_dir():
        return resolve_encoder_spec(str(out_dir / SHARED_DIR), pooling=args["pooling"],
                                    max_length=length, normalize=False, name=name)
    return resolve_encoder_spec(str(out_dir / QUESTION_DIR), str(out_dir / CTX_DIR),
                                pooling=args.get("pooling", "cls"), max_length=length,
                                normalize=False, name=name)


def trained_encoder(out_dir: Path, name: str | None = None) -> dict[str, Any]:
    """The ``EncoderSpec`` (as a dict) of a trained retriever, and the ``retrieval.dense``
    settings that select it: the hook for evaluating it with the dense retriever."""
    spec = encoder_spec(out_dir, name=name)
    dense = {"model": spec.question_model, "normalize": False, "max_length": spec.max_length}
    if spec.kind != "dpr":
        dense["pooling"] = spec.pooling
    if spec.kind != "shared":
        dense["ctx_model"] = spec.ctx_model
    return {"spec": spec.model_dump(mode="json"), "dense_params": dense}


def write_training_metrics(model_dirs: dict[str, Path], path: Path) -> dict[str, Any]:
    """Metrics JSON of the trained models (``trainer_state.json`` of each: steps, final losses,
    the loss curve) under their names. Times stay in ``trainer_state.json`` and the study's
    timings: metrics hold only what the same inputs reproduce."""
    metrics: dict[str, Any] = {}
    for name, model_dir in model_dirs.items():
        state_file = Path(model_dir) / "trainer_state.json"
        if not state_file.is_file():
            raise FileNotFoundError(f"{model_dir}: no trainer_state.json (not a trained model)")
        state = json.loads(state_file.read_text(encoding="utf-8"))
        metrics[name] = {**_summary(state),
                         "loss_curve": [[h["step"], round(h["loss"], 5)]
                                        for h in state.get("log_history", []) if "loss" in h]}
        if "passages" in state:
            metrics[name]["passages"] = state["passages"]
    write_json(path, metrics, indent=2)
    return metrics


def _summary(state: dict[str, Any]) -> dict[str, Any]:
    """Deterministic counts of a trainer state (no wall-clock time: they go into caches)."""
    keys = ("global_step", "epochs", "final_train_loss", "final_val_loss",
            "final_val_accuracy")
    return {k: state[k] for k in keys if k in state}
