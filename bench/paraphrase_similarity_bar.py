"""Which accepted paraphrases cost the reader EM? The similarity bar vs the words the reader needs.

Run in the root of a finished demo run (``qastress run``): it reads the run's scored
paraphrase candidates (every candidate the paraphraser wrote for the SQuAD-style dev questions,
with its similarity), lets the world raters (:mod:`tasks.demo.raters`) rate *every* candidate,
not only those above the 0.95 test-set bar, and has the run's trained reader answer the
accepted ones. Per similarity band it prints, for one accepted candidate per question (seeded
draw, as the test set), the reader's EM on the original and on the paraphrased question with a
paired bootstrap CI, how many content words the paraphrase changes, and the share of the
question's content words that occur in the answer's sentence (lexical overlap, the cue Gan & Ng
name as what readers lean on). Then the same over every accepted candidate split by whether the
paraphrase removes a question word that occurs in the answer's sentence.

Prints a Markdown table and writes the per-candidate rows to ``--out`` (JSON lines). Example::

    cd <demo run root> && python /path/to/bench/paraphrase_similarity_bar.py --out /tmp/bar
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

#: Similarity bands ``(low, high]``: the pipeline keeps a candidate strictly above a bar (0.95
#: test set, 0.9 augmentation, 0.83 adversarial augmentation).
BANDS = ((0.95, 1.01), (0.90, 0.95), (0.83, 0.90), (-1.01, 0.83))


def band_label(low: float, high: float) -> str:
    """How a band of :data:`BANDS` is printed."""
    return f"({low:.2f}, {min(high, 1.0):.2f}]" if low > 0 else f"<= {high:.2f}"


def band_of(similarity: float) -> str:
    """The label of the band holding ``similarity``."""
    for low, high in BANDS:
        if low < similarity <= high:
            return band_label(low, high)
    raise ValueError(f"similarity {similarity} outside every band")


def squad_file(rows: Sequence[dict], questions: dict, out: Path, field: str) -> Path:
    """A SQuAD v1.1 file asking ``row[field]`` about each row's context (id ``row['cid']``)."""
    data = [{"title": f"q{i}", "paragraphs": [{
        "context": questions[r["qid"]].context,
        "qas": [{"id": r["cid"], "question": r[field],
                 "answers": [{"text": a.text, "answer_start": a.answer_start}
                             for a in questions[r["qid"]].answers]}]}]}
        for i, r in enumerate(rows)]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"version": "1.1", "data": data}), encoding="utf-8")
    return out


def compare(rows: Sequence[dict], n_bootstrap: int) -> dict:
    """EM orig, EM para, drop (orig - para) with a paired bootstrap CI, in percent."""
    from tasks.reading.robustness import bootstrap_scores

    if not rows:
        return {"pairs": 0}
    orig = [r["em_orig"] for r in rows]
    para = [r["em_para"] for r in rows]
    drop, low, high = bootstrap_scores(orig, para, n=n_bootstrap, seed=0)
    n = len(rows)
    return {"pairs": n, "em_orig": 100 * sum(orig) / n, "em_para": 100 * sum(para) / n,
            "drop": 100 * drop, "low": 100 * low, "high": 100 * high,
            "changed": sum(r["changed"] for r in rows) / n,
            "overlap_orig": sum(r["overlap_orig"] for r in rows) / n,
            "overlap_para": sum(r["overlap_para"] for r in rows) / n}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="demo",
                        help="profile of the run's params.yaml, in the current directory (default: "
                        "%(default)s)")
    parser.add_argument("--adversarial", action="store_true",
                        help="the adversarial candidates (context suggestions) instead")
    parser.add_argument("--reader", type=Path, default=None,
                        help="reader checkpoint (default: the run's trained reader)")
    parser.add_argument("--out", type=Path, required=True, help="working/output directory")
    parser.add_argument("--seed", type=int, default=2019, help="draw of one pair per question")
    parser.add_argument("--n-bootstrap", type=int, default=2000,
                        help="bootstrap resamples of each EM drop's CI (default: %(default)s)")
    parser.add_argument("--threads", type=int, default=2,
                        help="torch CPU threads of the reader's predictions (default: %(default)s)")
    args = parser.parse_args()

    from tasks.demo.question_parser import QuestionGrammar
    from tasks.demo.raters import rate
    from tasks.evaluation.squad_metrics import iter_squad_v11, per_question_scores
    from tasks.io.squad import read_squad
    from tasks.io.tables import read_table
    from tasks.layout import Layout
    from tasks.model_names import model_slug
    from tasks.params_loading import load_params
    from tasks.paraphrase.edits import gold_sentence, pair_edit
    from tasks.paraphrase.text import load_stopwords
    from tasks.reading.stages import predict_squad_files

    params = load_params(Path("params.yaml"), profile=args.profile)
    layout = Layout(params)
    reader = args.reader or layout.reader_dir(model_slug(params.readers.model.model))
    dev = read_squad(params.raw_path("squad_dev"))
    questions = {q.id: q for q in dev.questions()}
    stopwords = load_stopwords()
    grammar = QuestionGrammar()

    rows: list[dict] = []
    scored = layout.adversarial_scored if args.adversarial else layout.paraphrase_scored
    table = read_table(scored).to_pylist()
    for k, cand in enumerate(table):
        q = questions[cand["qid"]]
        if not grammar.parse(q.question):
            continue
        ratings = [rate(grammar, q.question, cand["paraphrase"], lenient)
                   for lenient in (False, True)]
        if min(min(r) for r in ratings) < params.paraphrase.min_rating:
            continue
        edit = pair_edit(q.question, cand["paraphrase"], cand["suggestion"], gold_sentence(q),
                         stopwords, q.context)
        rows.append({"cid": f"{q.id}~{k}", "qid": q.id, "original": q.question,
                     "paraphrase": cand["paraphrase"], "similarity": cand["similarity"],
                     "band": band_of(cand["similarity"]), "changed": edit.changed,
                     "overlap_orig": edit.overlap_original,
                     "overlap_para": edit.overlap_paraphrase,
                     "cue_lost": edit.removes_answer_sentence_word,
                     "cue_added": edit.adds_context_word,
                     "holds_suggestion": bool(edit.holds_suggestion)})
    print(f"{len(table)} candidates, {len(rows)} accepted by both world raters "
          f"({len({r['qid'] for r in rows})} questions); "
          f"{sum(r['holds_suggestion'] for r in rows)} accepted ones hold their suggestion",
          flush=True)

    files = {"orig": squad_file(rows, questions, args.out / "orig.json", "original"),
             "para": squad_file(rows, questions, args.out / "para.json", "paraphrase")}
    predictions = predict_squad_files(reader, files, args.out / "predictions",
                                      cpu_threads=args.threads)
    for side in ("orig", "para"):
        raw = json.loads(files[side].read_text("utf-8"))
        answers = json.loads(predictions[side].read_text("utf-8"))
        scores = per_question_scores(iter_squad_v11(raw), answers)
        for row in rows:
            row[f"em_{side}"] = scores[row["cid"]][0]
    with open(args.out / "rows.jsonl", "w", encoding="utf-8") as stream:
        for row in rows:
            stream.write(json.dumps(row) + "\n")

    rng = random.Random(args.seed)
    print("\n| similarity band | pairs | changed content words | overlap orig -> para | "
          "EM orig | EM para | drop [95% CI] |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label in (band_label(low, high) for low, high in BANDS):
        by_question: dict[str, list[dict]] = {}
        for row in rows:
            if row["band"] == label:
                by_question.setdefault(row["qid"], []).append(row)
        chosen = [rng.choice(by_question[qid]) for qid in sorted(by_question)]
        print(_line(label, compare(chosen, args.n_bootstrap)))
    print("\nEvery accepted candidate (pairs share questions: the CI is optimistic):\n")
    print("| candidates | pairs | changed content words | overlap orig -> para | EM orig | "
          "EM para | drop [95% CI] |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, keep in (("removes a word of the answer's sentence", True),
                        ("keeps every word of the answer's sentence", False)):
        print(_line(label, compare([r for r in rows if r["cue_lost"] == keep],
                                   args.n_bootstrap)))


def _line(label: str, c: dict) -> str:
    if not c["pairs"]:
        return f"| {label} | 0 | | | | | |"
    return (f"| {label} | {c['pairs']} | {c['changed']:.2f} | {c['overlap_orig']:.2f} -> "
            f"{c['overlap_para']:.2f} | {c['em_orig']:.2f} | {c['em_para']:.2f} | "
            f"{c['drop']:+.2f} [{c['low']:+.2f}, {c['high']:+.2f}] |")


if __name__ == "__main__":
    main()
