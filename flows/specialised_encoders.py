"""Flow: specialised question encoders over ONE passage index (EntityQuestions, Table 4).

Sciavolino et al. (2021, §5) keep one passage index and train one question encoder per
relation: the passage encoder is frozen, so every question encoder searches the same index.
For each passage encoder of ``specialised_encoders.passage_encoders``:

- **dpr-nq**: the DPR-NQ pair of the train-retriever flow (``data/models/retriever/dpr-nq``);
- **dpr-paq**: a pair trained (from the same start as DPR-NQ) on PAQ-like questions, one
  generated per sampled passage (:mod:`tasks.training.paq_like`; PAQ itself uses a trained
  generator);

its passages are encoded into one FAISS index (the retrieval flow's ``dpr-nq`` index is reused
when it was built by the same encoder), then per relation with training questions a question
encoder is fine-tuned from the pair with ``freeze: onlyQ`` by the fine-tune step of Tables 2-3
(:func:`flows._finetune.finetune_pair`: its passage encoder checked bit-identical), and the
shared question encoder (the pair's own) and the specialised ones are evaluated over that
index: top-k per relation + macro, and the index memory saved against one index per relation.
Relations without training questions are rows saying so.
-> ``metrics/specialised_encoders.json``, ``reports/specialised_encoders.md``.
"""

from __future__ import annotations

import os
from pathlib import Path

from prefect import flow

from flows._finetune import finetune_pair, pair_retriever
from flows._params import resolve
from flows._retrieve import Collection, prepare_indexes
from tasks.config import Params
from tasks.io.atomic import write_json
from tasks.io.errors import MissingInputError
from tasks.layout import Layout
from tasks.reporting.specialised_report import write_specialised_report
from tasks.retrieval.faiss_index import read_index_manifest
from tasks.retrieval.query_sets import QuerySet, eq_split
from tasks.retrieval.retrievers import DenseRetriever
from tasks.training.finetune import finetune_config
from tasks.training.paq_like import generate_paq_like_task
from tasks.training.specialised import (
    SharedPassageIndex,
    evaluate_question_encoders,
    index_memory,
    plan_relations,
)
from tasks.training.stages import train_dpr_task


def paq_passage_encoder(params: Params, layout: Layout) -> tuple[Path, dict]:
    """Generate the PAQ-like questions and train the dpr-paq pair on them (full training,
    from the train-retriever flow's start model); its directory and the generation counts."""
    cfg, training = params.specialised_encoders.paq, params.retriever_training
    root = layout.specialised_root
    paq = generate_paq_like_task(
        params.raw_path("passages"), layout.eq_work / "facts.parquet",
        root / "paq-like.train.json", cfg.n_passages, cfg.seed,
        layout.eq_work / "splits.parquet", list(cfg.exclude_splits))
    print(f"PAQ-like: {paq['questions']} questions from {paq['sampled']} sampled passages "
          f"(skipped: {paq['skipped']})")
    init = training.init_model or layout.mlm_model
    if not Path(init).exists() and training.init_model is None:
        raise MissingInputError(f"{init}: no start model for dpr-paq (run the train-retriever "
                                "flow first)")
    out = root / "models" / "dpr-paq" / "pair"
    stats = train_dpr_task([root / "paq-like.train.json"], [], init, out,
                           str(layout.params.paths.state / "checkpoints" / "specialised"
                               / "dpr-paq"),
                           finetune_config(training.dpr, cfg.training, "full"),
                           cfg.training.max_train_questions)
    return out, {**paq, "training": stats}


def shared_index(params: Params, layout: Layout, retriever: DenseRetriever) -> SharedPassageIndex:
    """The passage index of ``retriever``: the retrieval flow's when it holds this encoder's
    vectors, else built once under ``data/specialised/indexes/``."""
    spec = retriever.encoder()
    existing = layout.dense_index(retriever.name)
    if (existing / "manifest.json").is_file() and (
            read_index_manifest(existing)["model_fingerprint"] == spec.fingerprint):
        print(f"{retriever.name}: reusing the passage index {existing}")
        return SharedPassageIndex(existing, spec)
    root = layout.specialised_root / "indexes" / retriever.name
    collection = Collection("psgs_w100", params.raw_path("passages"), None,
                            lambda model: (root / "shards", root / "index"), "flat",
                            token_cache=layout.token_cache)
    ref = prepare_indexes([retriever], collection, params.orchestration)[retriever.name]
    return SharedPassageIndex(ref.path, ref.spec)


def specialise(params: Params, layout: Layout, name: str, pair_dir: Path, plans: list,
               test: QuerySet) -> dict:
    """One passage encoder: its index, a question encoder per ready relation, evaluation."""
    cfg, dense = params.specialised_encoders, params.retrieval.dense
    index = shared_index(params, layout, pair_retriever(name, pair_dir, dense))
    config = finetune_config(params.retriever_training.dpr, cfg.finetune, "onlyQ")
    specs, finetune = {}, {}
    for plan in (p for p in plans if p.ready):
        tuned = finetune_pair(
            f"{name}-{plan.relation.lower()}", {plan.relation: [plan.train_file]}, config,
            pair_dir=pair_dir, out_dir=layout.specialised_root / "models" / name / plan.relation,
            checkpoint_dir=(params.paths.state / "checkpoints" / "specialised" / name
                            / plan.relation),
            dense=dense, max_questions={plan.relation: cfg.finetune.max_train_questions})
        stats = tuned.summary
        specs[plan.relation] = tuned.retriever.encoder()
        finetune[plan.relation] = {**stats, "passage_encoder_identical": True,
                                   "passage_tensors_compared": tuned.passage_tensors_compared}
        print(f"{name} / {plan.relation}: {stats['global_step']} steps on "
              f"{stats['train_questions']} questions, final loss {stats['final_train_loss']}")
    result = evaluate_question_encoders(
        index, specs, test, params.raw_path("passages"), ks=list(params.retrieval.ks),
        k=params.retrieval.headline_k, mode=params.retrieval.has_answer_mode,
        batch_size=dense.batch_size, device=dense.device, cpu_threads=dense.cpu_threads)
    manifest = index.index.manifest
    result.update({
        "index": {"path": Path(os.path.relpath(index.path, params.paths.data)).as_posix(),
                  "fingerprint": manifest["fingerprint"],
                  "rows": manifest["rows"], "dim": manifest["dim"], "opened": 1,
                  "searches": len(result["searches"])},
        "memory": index_memory(index.path, len(specs)),
        "finetune": finetune,
    })
    return result


@flow(name="specialised-encoders", log_prints=True)
def specialised_encoders(params: Params | None = None, profile: str | None = None,
                         params_file: str | None = None) -> dict:
    """Table 4: shared vs specialised question encoders over one passage index per passage
    encoder; returns the metrics written to ``metrics/specialised_encoders.json``."""
    params = resolve(params, profile, params_file)
    layout, cfg = Layout(params), params.specialised_encoders
    if not cfg.enabled:
        metrics: dict = {"enabled": False}
    else:
        test = eq_split(layout.eq_dataset)
        relations = list(cfg.relations or params.entity_questions.relations)
        plans = plan_relations(relations, layout.eq_dpr, test)
        test = QuerySet(test.name, {p.relation: test.groups[p.relation] for p in plans
                                    if p.relation in test.groups}, test.source)
        not_run: dict[str, int] = {}
        for plan in plans:
            if not plan.ready:
                not_run[plan.status] = not_run.get(plan.status, 0) + 1
        metrics = {
            "enabled": True, "k": params.retrieval.headline_k, "ks": list(params.retrieval.ks),
            "has_answer_mode": params.retrieval.has_answer_mode,
            "relations": {p.relation: {"status": p.status, "train_questions": p.train_questions,
                                       "test_questions": p.test_questions} for p in plans},
            "counts": {"relations": len(plans), "ran": sum(p.ready for p in plans),
                       "not_run": not_run},
            "passage_encoders": {},
        }
        for name in cfg.passage_encoders:
            if name == "dpr-paq":
                pair_dir, metrics["paq"] = paq_passage_encoder(params, layout)
            else:
                pair_dir = layout.trained_retriever(name)
            metrics["passage_encoders"][name] = specialise(params, layout, name, pair_dir,
                                                           plans, test)
            macro = metrics["passage_encoders"][name]["macro"]
            print(f"{name}: macro top-{metrics['k']} shared {macro['shared']} vs specialised "
                  f"{macro['specialised']}")
    write_json(layout.specialised_metrics, metrics, indent=2)
    write_specialised_report(metrics, layout.specialised_report)
    print(f"-> {layout.specialised_metrics}, {layout.specialised_report}")
    return metrics


if __name__ == "__main__":
    from flows.cli import main_for

    main_for("specialised-encoders")
