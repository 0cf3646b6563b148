"""How much Table 2 depends on its sample of test questions.

Scores the retriever-experiment TREC runs of one relation on all of its no-overlap test
questions and on the seeded sub-sample that ``entity_questions.no_overlap_test: N`` would have
drawn (the same ``sample_facts`` draw), and prints onlyP - onlyQ per fine-tuning seed on both.
Used in Session 15 to separate the effect of more test questions from that of another
no-overlap training sample when the demo's test set went from 100 to 300 questions
(``bench/RESULTS.md``). Run in a project that has run the retriever-experiments stage:

    python bench/table2_question_sample.py --relation P19 --sample 100
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np

RESULTS = Path("results/retriever_experiments")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--relation", default="P19",
                        help="the relation (Wikidata property id) to score (default: %(default)s)")
    parser.add_argument("--sample", type=int, default=100,
                        help="size of the sub-sample (no_overlap_test's former value)")
    parser.add_argument("--runs", type=Path, default=RESULTS / "runs" / "pattern",
                        help="directory of the retriever experiments' TREC runs (default: "
                        "%(default)s)")
    parser.add_argument("--queries", type=Path, default=RESULTS / "queries" / "pattern.json",
                        help="query set holding the relation's test questions (default: "
                        "%(default)s)")
    parser.add_argument("--passages", type=Path, default=RESULTS / "passages.parquet",
                        help="the experiments' passages, to judge the hits (default: %(default)s)")
    parser.add_argument("--profile", default="demo",
                        help="params.yaml profile, for the sample's seed (default: %(default)s)")
    parser.add_argument("--k", type=int, default=20,
                        help="a question counts as answered when a top-k passage holds the answer "
                        "(default: %(default)s)")
    args = parser.parse_args()
    # imported after parsing: these modules hold Prefect tasks (a Prefect import, ~2 s) and
    # `--help` needs none of them
    from tasks.io.trec import read_trec_run
    from tasks.params_loading import load_params
    from tasks.questions.facts import sample_facts
    from tasks.retrieval.core import load_passages
    from tasks.retrieval.query_sets import QuerySet, read_query_set
    from tasks.training.experiment_results import group_hits

    cfg = load_params(Path("params.yaml"), profile=args.profile).entity_questions
    query_set = read_query_set(args.queries)
    group = QuerySet(query_set.name, {args.relation: query_set.groups[args.relation]})
    n = len(group.groups[args.relation])
    if n <= args.sample:
        raise SystemExit(f"{args.relation} has {n} test questions: nothing to sub-sample")
    # the very draw of no_overlap_step (on positions: the test file keeps the split's order)
    sample = sample_facts(list(range(n)), args.sample, cfg.seed, args.relation,
                          "no-overlap:test")
    passages = load_passages(args.passages)
    prefix = f"ft-{args.relation.lower()}-"
    hits: dict[str, np.ndarray] = {}
    print(f"top-{args.k} in % on {args.relation}: all {n} questions | the {args.sample}-sample")
    for trec in sorted(args.runs.glob("*.trec")):
        if not (trec.stem.startswith(prefix) or trec.stem in ("bm25", "dpr-nq")):
            continue
        run = read_trec_run(trec)
        hits[trec.stem] = np.array(
            group_hits(run, group, passages, args.k, "eq-string")[args.relation], dtype=float)
        h = hits[trec.stem]
        print(f"  {trec.stem:34s} {h.mean() * 100:6.2f} | {h[sample].mean() * 100:6.2f}")
    print("onlyP - onlyQ per seed: all | sample")
    for name in sorted(hits):
        match = re.fullmatch(rf"{prefix}(\w+)-onlyp(-seed\d+)?", name)
        partner = name.replace("-onlyp", "-onlyq")
        if match and partner in hits:
            diff = hits[name] - hits[partner]
            print(f"  {match.group(1):8s} {match.group(2) or '(main seed)':12s} "
                  f"{diff.mean() * 100:+6.2f} | {diff[sample].mean() * 100:+6.2f}")


if __name__ == "__main__":
    main()
