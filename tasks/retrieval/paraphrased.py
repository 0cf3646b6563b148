"""Retrieval with the paraphrased SQuAD questions (Gan & Ng, 2019): does paraphrasing hurt?

The test sets of the paraphrase flow (``{dev,adv}_{orig,para}.json``) are pairs of SQuAD files
whose questions align BY POSITION (the release gives the para question the orig id minus 1, so
ids are never joined). Steps:

- collection: the distinct contexts of the orig files as a ``psgs_w100``-style TSV (ids from 1,
  title = article title);
- BM25 (a small Lucene index over it) and dense (the encoder of ``retrieval.dense``, the small
  collection encoded as one shard, flat FAISS index) retrieve the top-k passages of every orig
  and para question (qids ``<set>:<orig|para>:<position>``);
- evaluation: ``has_answer`` of each passage for the orig question's gold answers (the same
  answers for its paraphrase), top-k accuracy of orig and para per retriever and set, and the
  difference orig - para at the headline k with a paired bootstrap CI (pairs by position):
  metrics JSON + Markdown table + Prefect table artifact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from tasks.evaluation.has_answer import HasAnswerMode, has_answer_matrix
from tasks.evaluation.topk import bootstrap_difference, first_hit_ranks, hits_at_k, topk_accuracy
from tasks.io.atomic import write_json, write_text
from tasks.io.passages import Passage, count_passages, iter_passages, write_passages
from tasks.io.squad import SquadQuestion, read_squad
from tasks.io.trec import read_trec_run, write_trec_run
from tasks.orchestration import TRANSIENT, artifact_task
from tasks.reporting.tables import markdown_table, publish_table_artifact
from tasks.retrieval.bm25 import bm25_run_tag, bm25_search
from tasks.retrieval.dense_index import build_faiss_index, dense_search, encode_shard, shard_path
from tasks.retrieval.dense_stages import run_tag
from tasks.retrieval.encoders import EncoderSpec, encode_questions

VARIANTS = ("orig", "para")
SetFiles = Mapping[str, Sequence[Path]]  # {set name: (orig file, para file)}
Run = Mapping[str, Sequence[tuple[str, float]]]


def discover_paraphrase_sets(sets_dir: Path) -> dict[str, tuple[Path, Path]]:
    """``{set: (orig, para)}`` for every ``<set>_orig.json`` with a ``<set>_para.json`` beside
    it where both hold at least one question (sorted by set name; ``{}`` when none)."""
    sets_dir = Path(sets_dir)
    found: dict[str, tuple[Path, Path]] = {}
    if not sets_dir.is_dir():
        return found
    for orig in sorted(sets_dir.glob("*_orig.json")):
        name = orig.name[: -len("_orig.json")]
        para = sets_dir / f"{name}_para.json"
        if para.is_file() and len(read_squad(orig)) and len(read_squad(para)):
            found[name] = (orig, para)
    return found


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
    return f"{set_name}:{variant}:{position:06d}"


def queries(set_files: SetFiles) -> tuple[list[str], list[str]]:
    """``(qids, texts)`` of every orig and para question of every set."""
    qids: list[str] = []
    texts: list[str] = []
    for name, (orig, para) in load_pairs(set_files).items():
        for variant, items in zip(VARIANTS, (orig, para), strict=True):
            qids.extend(qid(name, variant, i) for i in range(len(items)))
            texts.extend(q.question for q in items)
    return qids, texts


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


def retrieve_bm25_paraphrased(index_dir: Path, set_files: SetFiles, run_path: Path,
                              k: int = 100, k1: float = 0.9, b: float = 0.4, threads: int = 2,
                              heap: str = "2g") -> Path:
    """Top-``k`` BM25 passages of every orig and para question (one TREC run)."""
    qids, texts = queries(set_files)
    run = bm25_search(index_dir, texts, qids, k=k, k1=k1, b=b, threads=threads, heap=heap,
                      progress=False)
    write_trec_run(run_path, run, tag=bm25_run_tag(k1, b))
    return run_path


def build_paraphrase_dense_index(collection_tsv: Path, shards_dir: Path, index_dir: Path,
                                 spec: EncoderSpec, batch_size: int = 64, device: str = "auto",
                                 bf16: bool = False) -> Path:
    """The small collection encoded as one shard -> exact (flat) FAISS index."""
    record = encode_shard(collection_tsv, 0, count_passages(collection_tsv),
                          shard_path(shards_dir, 0), spec, batch_size=batch_size, device=device,
                          bf16=bf16)
    return build_faiss_index([record], index_dir, kind="flat", model_fingerprint=spec.fingerprint)


def retrieve_dense_paraphrased(index_dir: Path, set_files: SetFiles, run_path: Path,
                               spec: EncoderSpec, k: int = 100, batch_size: int = 64,
                               device: str = "auto", bf16: bool = False) -> Path:
    """Encode every orig and para question and write its top-``k`` passages (TREC run)."""
    qids, texts = queries(set_files)
    embeddings = encode_questions(spec, texts, qids, batch_size=batch_size, device=device,
                                  bf16=bf16)
    write_trec_run(run_path, dense_search(index_dir, embeddings, k), tag=run_tag("dense",
                                                                                 spec.name))
    return run_path


def _first_hits(run: Run, set_name: str, variant: str, questions: Sequence[SquadQuestion],
                answers: Sequence[Sequence[str]], passages: Mapping[str, tuple[str, str]],
                mode: HasAnswerMode) -> list[int | None]:
    ranked = [[pid for pid, _ in run.get(qid(set_name, variant, i), ())]
              for i in range(len(questions))]
    return first_hit_ranks(has_answer_matrix(answers, ranked, passages, mode))


def evaluate_paraphrased(runs: Mapping[str, Run],
                         pairs: Mapping[str, tuple[Sequence[SquadQuestion],
                                                   Sequence[SquadQuestion]]],
                         passages: Mapping[str, tuple[str, str]], ks: Sequence[int],
                         k: int = 20, mode: HasAnswerMode = "string", n_bootstrap: int = 1000,
                         seed: int = 0, confidence: float = 0.95) -> dict:
    """Top-k accuracy (percent) of orig and para questions per set and retriever, and the
    top-``k`` difference orig - para (points; positive = paraphrasing hurts) with a paired
    bootstrap CI over positions. Both variants are judged by the orig question's answers."""
    ks = list(dict.fromkeys([*ks, k]))
    sets: dict[str, dict] = {}
    for set_name, (orig, para) in pairs.items():
        if len(orig) != len(para):
            raise ValueError(f"{set_name}: {len(orig)} orig but {len(para)} para questions")
        answers = [[a.text for a in q.answers] for q in orig]
        per_retriever: dict[str, dict] = {}
        for name, run in runs.items():
            firsts = {variant: _first_hits(run, set_name, variant, items, answers, passages,
                                           mode)
                      for variant, items in zip(VARIANTS, (orig, para), strict=True)}
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
        sets[set_name] = {"questions": len(orig), "retrievers": per_retriever,
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


def evaluate_paraphrased_runs(run_paths: Mapping[str, Path], set_files: SetFiles,
                              collection_tsv: Path, metrics_path: Path, report_path: Path,
                              ks: Sequence[int], k: int = 20, mode: HasAnswerMode = "string",
                              n_bootstrap: int = 1000, seed: int = 0,
                              confidence: float = 0.95) -> dict:
    """:func:`evaluate_paraphrased` of TREC runs -> metrics JSON, Markdown, Prefect artifact."""
    passages = {p.id: (p.title, p.text) for p in iter_passages(collection_tsv)}
    runs = {name: read_trec_run(path) for name, path in run_paths.items()}
    metrics = evaluate_paraphrased(runs, load_pairs(set_files), passages, ks, k=k, mode=mode,
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
retrieve_bm25_paraphrased_task = artifact_task(retrieve_bm25_paraphrased, outputs=("run_path",),
                                               name="paraphrased: retrieve BM25", **TRANSIENT)
build_paraphrase_dense_index_task = artifact_task(build_paraphrase_dense_index,
                                                  outputs=("shards_dir", "index_dir"),
                                                  name="paraphrased: build dense index")
retrieve_dense_paraphrased_task = artifact_task(retrieve_dense_paraphrased,
                                                outputs=("run_path",),
                                                name="paraphrased: retrieve dense")
evaluate_paraphrased_runs_task = artifact_task(evaluate_paraphrased_runs,
                                               outputs=("metrics_path", "report_path"),
                                               name="paraphrased: evaluate")
