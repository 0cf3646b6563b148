"""Flow: train a dense retriever (DPR, Karpukhin et al., 2020) with Lightning.

Without a pre-trained BERT offline, a small BERT is pre-trained by masked-language modelling
on the passages; the bi-encoder (question + passage encoder, [CLS] dot product) is then
trained on NQ-style DPR training JSON (DPR-NQ) -- or on the EntityQuestions relations -- with
in-batch negatives plus one BM25 hard negative per question. The encoders are saved as a DPR
pair loadable by the dense retriever; the flow returns their ``EncoderSpec`` (the hook for
evaluating them through the retrieval core) and writes the loss curves as metrics.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from flows._params import raw_input, resolve
from tasks.config import Params
from tasks.layout import Layout
from tasks.training.retriever import relation_training_files, trained_encoder
from tasks.training.stages import pretrain_mlm_task, train_dpr_task, training_metrics_task


def training_data(params: Params) -> tuple[str, list[Path], list[Path]]:
    """Name of the trained model and its train / dev DPR training JSON files."""
    cfg = params.retriever_training
    if cfg.data == "nq":
        return "dpr-nq", [raw_input(params, "nq_train")], [raw_input(params, "nq_dev")]
    relations = cfg.relations or params.entity_questions.relations
    dpr_dir = Layout(params).eq_dpr
    return ("dpr-eq", relation_training_files(dpr_dir, relations, "train"),
            relation_training_files(dpr_dir, relations, "dev"))


@flow(name="train-retriever", log_prints=True)
def train_retriever(params: Params | None = None, profile: str | None = None,
                    params_file: str | None = None) -> dict:
    """Pre-train (MLM, cached), train the bi-encoder, write metrics; return the steps'
    summaries and ``encoder`` (``EncoderSpec`` + ``retrieval.dense`` settings of the pair)."""
    params = resolve(params, profile, params_file)
    layout, cfg = Layout(params), params.retriever_training
    stats: dict[str, dict] = {}
    models: dict[str, Path] = {}
    init: Path | str | None = cfg.init_model
    if init is None:
        stats["mlm"] = pretrain_mlm_task(raw_input(params, "passages"), layout.mlm_model,
                                         cfg.mlm)
        init = models["mlm"] = layout.mlm_model
    elif Path(init).exists():
        init = Path(init)
    name, train_files, dev_files = training_data(params)
    out_dir = layout.trained_retriever(name)
    stats["dpr"] = train_dpr_task(train_files, dev_files, init, out_dir,
                                  str(layout.retriever_checkpoints(name)), cfg.dpr,
                                  cfg.max_train_questions)
    models[name] = out_dir
    stats["metrics"] = training_metrics_task(models, layout.retriever_training_metrics)
    stats["encoder"] = trained_encoder(out_dir, name=name)
    dpr = stats["dpr"]
    print(f"{name}: {dpr['global_step']} steps, final train loss {dpr['final_train_loss']:.4f}"
          f" -> {out_dir}; evaluate with retrieval.dense = {stats['encoder']['dense_params']}")
    return stats


if __name__ == "__main__":
    from flows.cli import main_for

    main_for("train-retriever")
