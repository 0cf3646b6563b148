"""Retrieval with the paraphrased SQuAD questions (Gan & Ng, 2019): does paraphrasing hurt?

The test sets of the paraphrase flow (``{dev,adv}_{orig,para}.json``) are pairs of SQuAD files
whose questions align BY POSITION (the release gives the para question the orig id minus 1, so
ids are never joined). Steps:

- collection: the distinct contexts of the orig files as a ``psgs_w100``-style TSV (ids from 1,
  title = article title);
- the orig and para questions are one query set
  (:func:`~tasks.retrieval.query_sets.paraphrased_query_set`, groups ``<set>:<orig|para>``,
  qids ``<set>:<orig|para>:<position>``), retrieved by every retriever over that collection
  like the test split over ``psgs_w100`` (a small BM25 index, a dense index per encoder);
- evaluation (:func:`tasks.retrieval.core.evaluate`): ``has_answer`` of each passage for the
  orig question's gold answers (the same answers for its paraphrase), top-k accuracy of orig
  and para per retriever and set, and the difference orig - para at the headline k with a
  paired bootstrap CI (pairs by position): metrics JSON + Markdown table + Prefect table
  artifact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from tasks.evaluation.has_answer import DEFAULT_MODE, HasAnswerMode
from tasks.evaluation.topk import bootstrap_difference, hits_at_k, topk_accuracy
from tasks.io.atomic import write_json, write_text
from tasks.io.passages import Passage, iter_passages, write_passages
from tasks.io.squad import (  # noqa: F401  (discover_paraphrase_sets re-exported)
    SquadQuestion,
    discover_paraphrase_sets,
    read_squad,
)
from tasks.io.trec import read_trec_run
from tasks.orchestration import artifact_task
from tasks.reporting.tables import markdown_table, publish_table_artifact
from tasks.retrieval.core import Passages, evaluate
from tasks.retrieval.evaluate import Run, question_id
from tasks.retrieval.query_sets import (
    VARIANTS,
    QuerySet,
    paraphrased_group,
    paraphrased_query_set,
    read_query_set,
)

SetFiles = Mapping[str, Sequence[Path]]  # {set name: (orig file, para file)}


def load_pairs(set_files: SetFiles) -> dict[str, tuple[list[SquadQuestion], list[SquadQuestion]]]:
    """``{set: (orig questions, para questions)}`` in file order; the two must align."""
    pairs = {}
    for name, (orig_path, para_path) in set_files.items():
        orig = list(read_squad(orig_path).questions())
        para = list(read_squad(para_path).questions())
        if len(orig) != len(para):
            raise ValueError(f"{name}: {orig_path} has {len(orig)} questions but {para_path} has "
                             f"{len(para)}; orig and para questions must align by position")
        pairs[name] = (orig, para)
    return pairs


def qid(set_name: str, variant: str, position: int) -> str:
    """The run id of the question at ``position`` of a set's orig or para file."""
    return question_id(paraphrased_group(set_name, variant), position)


def paraphrased_questions(set_files: SetFiles) -> QuerySet:
    """The query set of every orig and para question of every set."""
    return paraphrased_query_set(load_pairs(set_files),
                                 source=", ".join(str(p) for f in set_files.values() for p in f))


def queries(set_files: SetFiles) -> tuple[list[str], list[str]]:
    """``(qids, texts)`` of every orig and para question of every set."""
    query_set = paraphrased_questions(set_files)
    return query_set.qids, query_set.texts


def paraphrase_collection(set_files: SetFiles, collection_tsv: Path) -> Path:
    """The distinct contexts of the orig files (first occurrence order) as a passage TSV:
    ids from 1, title = the article title of the context's first occurrence. Atomic."""
    seen: dict[str, str] = {}
    for orig_path, _ in set_files.values():
        for question in read_squad(orig_path).questions():
            seen.setdefault(question.context, question.title)
    if not seen:
        raise ValueError(f"no contexts in the orig files of {sorted(set_files)}")
    write_passages(collection_tsv, (Passage(str(i), context, title)
                                    for i, (context, title) in enumerate(seen.items(), start=1)))
    return Path(collection_tsv)


def read_collection(collection_tsv: Path) -> dict[str, tuple[str, str]]:
    """``{passage id: (title, text)}`` of a (small) passage TSV, read whole (a passage id given
    twice is :func:`~tasks.io.passages.iter_passages`' error naming the line)."""
    return {passage.id: (passage.title, passage.text)
            for passage in iter_passages(collection_tsv)}


def evaluate_paraphrased(runs: Mapping[str, Run], query_set: QuerySet, passages: Passages,
                         ks: Sequence[int], k: int = 20, mode: HasAnswerMode = DEFAULT_MODE,
                         n_bootstrap: int = 1000, seed: int = 0,
                         confidence: float = 0.95) -> dict:
    """Top-k accuracy (percent) of orig and para questions per set and retriever, and the
    top-``k`` difference orig - para (points; positive = paraphrasing hurts) with a paired
    bootstrap CI over positions. Both variants are judged by the orig question's answers
    (as :func:`~tasks.retrieval.query_sets.paraphrased_query_set` gives them)."""
    ks = list(dict.fromkeys([*ks, k]))
    evaluations = {name: evaluate(run, query_set, passages, ks, mode, result_ctxs=0)
                   for name, run in runs.items()}
    sets: dict[str, dict] = {}
    for set_name in query_set.meta["sets"]:
        groups = [paraphrased_group(set_name, variant) for variant in VARIANTS]
        n_orig, n_para = (len(query_set.groups[g]) for g in groups)
        if n_orig != n_para:
            raise ValueError(f"{set_name}: {n_orig} orig but {n_para} para questions")
        per_retriever: dict[str, dict] = {}
        for name in runs:
            firsts = {variant: evaluations[name][group].first_hits
                      for variant, group in zip(VARIANTS, groups, strict=True)}
            hits = {variant: hits_at_k(f, k) for variant, f in firsts.items()}
            diff, low, high = bootstrap_difference(hits["orig"], hits["para"], n=n_bootstrap,
                                                   seed=seed, confidence=confidence)
            per_retriever[name] = {
                **{variant: {f"top{kk}": round(100 * v, 2)
                             for kk, v in topk_accuracy(f, ks).items()}
                   for variant, f in firsts.items()},
                "difference": round(100 * diff, 2), "ci_low": round(100 * low, 2),
                "ci_high": round(100 * high, 2), "significant": bool(low > 0 or high < 0),
                "lost": sum(a > b for a, b in zip(hits["orig"], hits["para"], strict=True)),
                "gained": sum(a < b for a, b in zip(hits["orig"], hits["para"], strict=True)),
            }
        most = max(per_retriever, key=lambda r: per_retriever[r]["difference"], default=None)
        if most is not None and per_retriever[most]["difference"] <= 0:
            most = None  # no retriever lost accuracy on the paraphrases
        sets[set_name] = {"questions": n_orig, "retrievers": per_retriever,
                          "most_hurt": most}
    return {
        "k": k,
        "ks": ks,
        "has_answer_mode": mode,
        "statistic": f"top-{k} accuracy (percent); difference = orig - para in points "
                     "(positive: paraphrasing hurts), paired bootstrap over question positions",
        "n_bootstrap": n_bootstrap,
        "seed": seed,
        "confidence": confidence,
        "sets": sets,
    }


def paraphrased_rows(metrics: Mapping) -> tuple[list[str], list[list[object]]]:
    """One row per set and retriever: orig / para accuracy at k and the difference + CI."""
    k = metrics["k"]
    header = ["set", "retriever", "questions", f"orig top-{k}", f"para top-{k}",
              "orig - para", "95% CI", "lost / gained"]
    rows = [[set_name, name, block["questions"], r["orig"][f"top{k}"], r["para"][f"top{k}"],
             f"{r['difference']:+.2f}", f"[{r['ci_low']:+.2f}, {r['ci_high']:+.2f}]"
             + (" *" if r["significant"] else ""), f"{r['lost']} / {r['gained']}"]
            for set_name, block in metrics["sets"].items()
            for name, r in block["retrievers"].items()]
    return header, rows


def evaluate_paraphrased_runs(run_paths: Mapping[str, Path], queries: Path,
                              collection_tsv: Path, metrics_path: Path, report_path: Path,
                              ks: Sequence[int], k: int = 20, mode: HasAnswerMode = DEFAULT_MODE,
                              n_bootstrap: int = 1000, seed: int = 0,
                              confidence: float = 0.95) -> dict:
    """:func:`evaluate_paraphrased` of TREC runs on a query-set file -> metrics JSON, Markdown,
    Prefect artifact. The collection of contexts is read once, whole (it is small)."""
    passages = read_collection(collection_tsv)
    runs = {name: read_trec_run(path) for name, path in run_paths.items()}
    metrics = evaluate_paraphrased(runs, read_query_set(queries), passages, ks, k=k, mode=mode,
                                   n_bootstrap=n_bootstrap, seed=seed, confidence=confidence)
    metrics["collection_passages"] = len(passages)
    write_json(metrics_path, metrics, indent=2)
    header, rows = paraphrased_rows(metrics)
    level = round(100 * confidence)
    text = (f"# Original vs paraphrased SQuAD questions: top-{k} retrieval accuracy\n\n"
            f"Collection: the {len(passages)} distinct contexts of the orig files. Answer "
            f"matching: `{mode}` (the orig question's answers for both). Accuracy in percent; "
            f"orig - para in points with a paired bootstrap {level}% CI over question "
            f"positions ({n_bootstrap} resamples; * = excludes 0). Positive = paraphrasing "
            "hurts.\n\n" + markdown_table(header, rows))
    for set_name, block in metrics["sets"].items():
        hurt = block["most_hurt"]
        text += (f"\nMost hurt on `{set_name}`: {hurt}." if hurt is not None
                 else f"\nNo retriever lost accuracy on `{set_name}`.")
    write_text(report_path, text + "\n")
    publish_table_artifact("retrieval-paraphrased", header, rows,
                           f"Top-{k} accuracy, original vs paraphrased questions")
    return metrics


paraphrase_collection_task = artifact_task(paraphrase_collection, outputs=("collection_tsv",),
                                           name="paraphrased: collection")
evaluate_paraphrased_runs_task = artifact_task(evaluate_paraphrased_runs,
                                               outputs=("metrics_path", "report_path"),
                                               name="paraphrased: evaluate")
