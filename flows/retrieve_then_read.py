"""Flow: retrieve-then-read EM on EntityQuestions (beyond the papers).

The reader trained by the train-reader stage (``data/readers/<readers.model>/``) reads the top-k
passages (``retrieve_then_read.ks``) that each retriever found (the retrieval stage's DPR result
JSON, ``results/retrieval/<retriever>/<relation>.<retriever>.json``) for the same deterministic
sample of ``questions_per_relation`` test questions per relation. Its answer is the span with
the highest span score (start + end logit) over the k passages, the standard open-domain
choice -> ``results/retrieve_then_read/<retriever>/top<k>.json`` ({id: answer}); with
``fusion``, also by the span score fused with the retriever's score (BERTserini; weight fitted
leave-one-relation-out) -> ``top<k>_fused.json`` for k > 1 -> EM (SQuAD
normalisation, max over the EntityQuestions answers) per relation, macro average, the answer
recall of the passages read (the retrieval upper bound), and the paired bootstrap CI of
``baseline`` (BM25) vs each other retriever -> ``metrics/retrieve_then_read.json`` +
``reports/retrieve_then_read.md`` + Prefect table artifact.
"""

from __future__ import annotations

from prefect import flow

from flows._params import resolve
from flows.train_reader import trained_reader
from tasks.config import Params
from tasks.io.errors import MissingInputError
from tasks.layout import Layout
from tasks.model_names import model_slug
from tasks.reading.retrieve_then_read import result_files
from tasks.reading.stages import rtr_evaluate_task, rtr_predict_task


@flow(name="retrieve-then-read", log_prints=True)
def retrieve_then_read(params: Params | None = None, profile: str | None = None,
                       params_file: str | None = None) -> dict:
    """Read each retriever's top-k passages with the trained reader; EM per retriever."""
    params = resolve(params, profile, params_file)
    layout, cfg = Layout(params), params.retrieve_then_read
    names = list(dict.fromkeys(cfg.retrievers or params.retrieval.retrievers))
    present = {name: layout.retrieval_results(name) for name in names
               if result_files(layout.retrieval_results(name), name)}
    absent = [name for name in names if name not in present]
    if absent and (cfg.retrievers or not present):
        raise MissingInputError(
            f"{'retrieve_then_read' if cfg.retrievers else 'retrieval'}.retrievers {absent}: no "
            f"<relation>.<retriever>.json under "
            f"{[str(layout.retrieval_results(n)) for n in absent]}; run `qastress stage "
            "retrieval` first (or the whole study, `qastress run`)")
    if absent:
        print(f"no retrieval results for {absent}: skipped")
    reader = model_slug(params.readers.model.model)
    model_dir = trained_reader(params)
    ks = list(cfg.ks)
    out_dir = layout.retrieve_then_read_results
    read = rtr_predict_task(model_dir, present, out_dir, ks=ks,
                            per_relation=cfg.questions_per_relation, seed=cfg.seed,
                            batch_size=params.readers.model.predict_batch_size,
                            mode=params.retrieval.has_answer_mode, fusion=cfg.fusion,
                            fusion_grid=cfg.fusion_grid)
    print(f"reader {reader}: {read['questions']} questions, {read['passages_read']} "
          f"distinct (question, passage) pairs read")
    if cfg.baseline not in present:
        print(f"baseline {cfg.baseline} has no results: no paired comparison")
    metrics = rtr_evaluate_task(out_dir, list(present), ks, baseline=cfg.baseline,
                                counts=read["counts"],
                                metrics_path=layout.retrieve_then_read_metrics,
                                report_path=layout.retrieve_then_read_report, reader=reader,
                                n_bootstrap=cfg.n_bootstrap, seed=cfg.bootstrap_seed,
                                confidence=cfg.confidence)
    for name, block in metrics["retrievers"].items():
        print(f"{name}: " + ", ".join(
            f"EM@{k} {block[f'top{k}']['exact_match']:.2f} (recall "
            f"{block[f'top{k}']['answer_recall']:.2f})" for k in ks))
    for pair, by_k in metrics["comparisons"].items():
        for key, c in by_k.items():
            print(f"{pair} {key}: {c['difference']:+.2f} [{c['ci_low']:+.2f}, "
                  f"{c['ci_high']:+.2f}]")
    print(f"retrieve-then-read -> {layout.retrieve_then_read_report}")
    return metrics


if __name__ == "__main__":
    from flows.cli import main_for

    main_for("retrieve_then_read")
