"""Table rows of the readers' metrics (Gan & Ng, 2019, Tables 1-6; retrieve-then-read), shared by
the Markdown reports the reading flows write and the HTML report: pure functions of the metrics
JSON."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from tasks.reporting.seed_tables import mean_sd, t_interval, two_level

#: Counts of the augmented training data shown in the report, in order.
COUNT_KEYS = ("training_questions", "paraphrased_questions", "candidates", "skipped_below_bar",
              "above_bar", "skipped_by_raters", "skipped_per_question", "skipped_over_n",
              "requested", "added", "shortfall", "total_training_questions")


def reader_rows(metrics: Mapping) -> tuple[list[str], list[list[object]]]:
    """One row per reader and set: orig / para EM and F1, the drops with CIs."""
    header = ["set", "reader", "questions", "orig EM", "orig F1", "para EM", "para F1",
              "EM drop", "EM 95% CI", "F1 drop", "F1 95% CI"]
    rows: list[list[object]] = []
    for reader, sets in metrics["readers"].items():
        for name, b in sets.items():
            if not b["questions"]:
                rows.append([name, reader, 0, *["-"] * (len(header) - 3)])
                continue
            row: list[object] = [name, reader, b["questions"], b["orig"]["exact_match"],
                                 b["orig"]["f1"], b["para"]["exact_match"], b["para"]["f1"]]
            for metric in ("exact_match", "f1"):
                d = b[f"{metric}_drop"]
                row += [f"{d['difference']:+.2f}", f"[{d['ci_low']:+.2f}, {d['ci_high']:+.2f}]"
                        + (" *" if d["significant"] else "")]
            rows.append(row)
    return header, rows


def gain_rows(metrics: Mapping) -> tuple[list[str], list[list[object]]]:
    """One row per kind and test file: before/after EM and F1, the gains with CIs."""
    header = ["augmentation", "test file", "questions", "EM before", "EM after", "EM gain",
              "EM 95% CI", "F1 before", "F1 after", "F1 gain", "F1 95% CI"]
    rows: list[list[object]] = []
    for kind, block in metrics["kinds"].items():
        for name, b in block["sets"].items():
            if not b["questions"]:
                rows.append([kind, name, 0, *["-"] * (len(header) - 3)])
                continue
            row: list[object] = [kind, name, b["questions"]]
            for metric in ("exact_match", "f1"):
                g = b[f"{metric}_gain"]
                row += [b["before"][metric], b["after"][metric], f"{g['difference']:+.2f}",
                        f"[{g['ci_low']:+.2f}, {g['ci_high']:+.2f}]"
                        + (" *" if g["significant"] else "")]
            rows.append(row)
    return header, rows


def count_rows(metrics: Mapping) -> tuple[list[str], list[list[object]]]:
    """One row per kind: the counts of the augmented training data (see :data:`COUNT_KEYS`)."""
    header = ["augmentation", "similarity bar", *[k.replace("_", " ") for k in COUNT_KEYS]]
    rows = [[kind, block["augmentation"].get("threshold", "-"),
             *[block["augmentation"].get(k, "-") for k in COUNT_KEYS]]
            for kind, block in metrics["kinds"].items()]
    return header, rows


#: The columns :func:`_over_seeds` fills, after a table's own leading columns.
OVER_SEEDS = ["mean (sd)", "t-interval", "two-level CI"]


def _over_seeds(em: Mapping, f1: Mapping) -> list[object]:
    """EM mean (sd), t-interval, two-level CI, seeds above 0; F1 likewise (no count)."""
    return [mean_sd(em), t_interval(em), two_level(em), f"{em['above_zero']} of {em['seeds']}",
            mean_sd(f1), t_interval(f1), two_level(f1)]


def _over_seeds_header(em_label: str, count_label: str) -> list[str]:
    """The header cells of :func:`_over_seeds`: ``em_label`` (with "EM") names what is
    summarised."""
    f1_label = em_label.replace("EM", "F1")
    return [*(f"{em_label} {c}" for c in OVER_SEEDS), count_label,
            *(f"{f1_label} {c}" for c in OVER_SEEDS)]


def seed_intro(seeds: Mapping) -> str:
    """What the training-seed tables show (Markdown and HTML report)."""
    level = round(100 * seeds["confidence"])
    return (f"The reader before augmentation and each re-trained reader, trained once per seed "
            f"({', '.join(str(s) for s in seeds['seeds'])}; same data and settings). Gain = "
            "after - before of the same seed, in points; mean (sample sd) over seeds and a "
            f"Student-t {level}% interval for the mean gain over training draws (* = excludes "
            "0). The bootstrap CIs above cover the questions of one training draw only; the "
            f"two-level {level}% CI resamples both the seeds and the questions (a crossed "
            "bootstrap: every seed answers the same questions), so it covers both; with few "
            "seeds its share of the seeds runs narrower than the t-interval (a percentile "
            "bootstrap over a handful of draws), so read the wider of the two.")


def seed_gain_rows(seeds: Mapping) -> tuple[list[str], list[list[object]]]:
    """One row per kind and test file of the training-seed comparison
    (:func:`tasks.reading.training_seeds.compare_over_seeds`): mean EM before/after, the EM
    gain of every seed, its mean (sd), t-interval and two-level CI, how many seeds gain; F1
    gain likewise."""
    order = [str(s) for s in seeds["seeds"]]
    header = ["augmentation", "test file", "questions", "EM before (mean)", "EM after (mean)",
              f"EM gain per seed ({', '.join(order)})",
              *_over_seeds_header("EM gain", "seeds gaining EM")]
    rows: list[list[object]] = []
    for kind, block in seeds["kinds"].items():
        for name, b in block["sets"].items():
            if not b["questions"]:
                rows.append([kind, name, 0, *["-"] * (len(header) - 3)])
                continue
            em, f1 = b["exact_match_gain"], b["f1_gain"]
            per_seed = ", ".join(f"{b['per_seed'][s]['exact_match_gain']:+.2f}" for s in order)
            rows.append([kind, name, b["questions"], b["before_exact_match"]["mean"],
                         b["after_exact_match"]["mean"], per_seed, *_over_seeds(em, f1)])
    return header, rows


def _seed_readers(seeds: Mapping) -> Iterator[tuple[str, str, Mapping]]:
    """``(row label, side, kind block)`` for each reader of the seed tables: the reader before
    augmentation once (the same for every kind), then the re-trained one of each kind."""
    for i, (kind, block) in enumerate(seeds["kinds"].items()):
        if not i:
            yield "before augmentation", "before", block
        yield f"after: {kind}", "after", block


def seed_drop_rows(seeds: Mapping) -> tuple[list[str], list[list[object]]]:
    """Tables 1-2 over training seeds: one row per reader (before augmentation, once; after,
    per kind) and paraphrased set: the drop orig - para per seed and over seeds."""
    order = [str(s) for s in seeds["seeds"]]
    header = ["reader", "set", f"EM orig - para per seed ({', '.join(order)})",
              *_over_seeds_header("EM", "seeds above 0")]
    rows: list[list[object]] = []
    for label, side, block in _seed_readers(seeds):
        for name, b in block.get("paraphrase_drop", {}).items():
            em, f1 = b[side]["exact_match"], b[side]["f1"]
            per_seed = ", ".join(f"{b[side]['per_seed'][s]['exact_match']:+.2f}"
                                 for s in order)
            rows.append([label, name, per_seed, *_over_seeds(em, f1)])
    return header, rows


def seed_edit_group_rows(seeds: Mapping) -> tuple[list[str], list[list[object]]]:
    """The paraphrase drop over training seeds by what the paraphrase changes: one row per
    reader (before augmentation, once; after, per kind), paraphrased set and edit group: the EM
    drop per seed, its mean (sd), t-interval and two-level CI."""
    header = ["reader", "set", "the paraphrase", "pairs", "EM drop per seed",
              *(f"EM drop {c}" for c in OVER_SEEDS)]
    rows: list[list[object]] = []
    for label, side, block in _seed_readers(seeds):
        for name, sides in block.get("paraphrase_drop_by_edit", {}).items():
            for group, g in sides[side]["groups"].items():
                s = g["summary"]
                cells = ([", ".join(f"{v:+.2f}" for v in g["per_seed"]), mean_sd(s),
                          t_interval(s), two_level(s)] if s else ["-"] * 4)
                rows.append([label, name, EDIT_GROUP_LABELS.get(group, group), g["pairs"],
                             *cells])
    return header, rows


def seed_pattern_rows(seeds: Mapping) -> tuple[list[str], list[list[object]]]:
    """One row per kind and paraphrased set: the paraphrased questions' gain minus their
    originals' gain, per seed and over seeds (EM and F1)."""
    order = [str(s) for s in seeds["seeds"]]
    header = ["augmentation", "set", f"EM para - orig gain per seed ({', '.join(order)})",
              *_over_seeds_header("EM", "seeds above 0")]
    rows: list[list[object]] = []
    for kind, block in seeds["kinds"].items():
        for name, b in block["paraphrase_minus_original"].items():
            em, f1 = b["exact_match"], b["f1"]
            per_seed = ", ".join(f"{b['per_seed'][s]['exact_match']:+.2f}" for s in order)
            rows.append([kind, name, per_seed, *_over_seeds(em, f1)])
    return header, rows


def _fused_ks(metrics: Mapping) -> list[int]:
    """The ks with a fused selection for at least one retriever."""
    return [k for k in metrics["ks"]
            if any(f"top{k}_fused" in block for block in metrics["retrievers"].values())]


def selection_label(key: str) -> str:
    """``top5`` -> ``5``, ``top5_fused`` -> ``5 fused`` (a metrics key as a table cell)."""
    return key[3:].replace("_fused", " fused")


def open_rows(metrics: Mapping) -> tuple[list[str], list[list[object]]]:
    """One row per retriever: per k, macro EM and answer recall, then EM of the fused choice
    where one was made (shared with the HTML)."""
    header = ["retriever", "questions"]
    for k in metrics["ks"]:
        header += [f"EM@{k}", f"recall@{k}"]
    fused = _fused_ks(metrics)
    header += [f"EM@{k} fused" for k in fused]
    rows: list[list[object]] = []
    for name, block in metrics["retrievers"].items():
        row: list[object] = [name, block[f"top{metrics['ks'][0]}"]["questions"]]
        for k in metrics["ks"]:
            row += [f"{block[f'top{k}']['exact_match']:.2f}",
                    f"{block[f'top{k}']['answer_recall']:.2f}"]
        row += [f"{block[f'top{k}_fused']['exact_match']:.2f}" if f"top{k}_fused" in block
                else "-" for k in fused]
        rows.append(row)
    return header, rows


def comparison_rows(metrics: Mapping) -> tuple[list[str], list[list[object]]]:
    """One row per compared pair and k (and selection): the EM difference and its CI."""
    level = round(100 * metrics["confidence"])
    header = ["pair", "k", "EM difference", f"EM {level}% CI"]
    rows = [[pair, selection_label(key), f"{c['difference']:+.2f}",
             f"[{c['ci_low']:+.2f}, {c['ci_high']:+.2f}]" + (" *" if c["significant"] else "")]
            for pair, by_k in metrics["comparisons"].items() for key, c in by_k.items()]
    return header, rows


def fusion_rows(metrics: Mapping) -> tuple[list[str], list[list[object]]]:
    """One row per retriever and k: fused minus best-span EM, its CI, and the fitted weights
    (min-max over relations; 0 = reader alone, 1 = retriever alone)."""
    level = round(100 * metrics["confidence"])
    header = ["retriever", "k", "EM best span", "EM fused", "fused - span", f"{level}% CI",
              "weight (min-max)"]
    rows: list[list[object]] = []
    for name, gains in metrics.get("fusion_gains", {}).items():
        block = metrics["retrievers"][name]
        for key, c in gains.items():
            weights = list(block[key].get("fusion", {}).get("weights", {}).values())
            spread = f"{min(weights):.2f}-{max(weights):.2f}" if weights else "-"
            span_em = block[key.removesuffix("_fused")]["exact_match"]
            rows.append([name, selection_label(key), f"{span_em:.2f}",
                         f"{block[key]['exact_match']:.2f}", f"{c['difference']:+.2f}",
                         f"[{c['ci_low']:+.2f}, {c['ci_high']:+.2f}]"
                         + (" *" if c["significant"] else ""), spread])
    return header, rows


def relation_rows(metrics: Mapping, k: int) -> tuple[list[str], list[list[object]]]:
    """EM at k per relation (rows) and retriever (columns)."""
    names = list(metrics["retrievers"])
    header = ["relation", "questions", *names]
    relations = sorted(metrics["questions_per_relation"])
    rows = [[r, metrics["questions_per_relation"][r],
             *[f"{metrics['retrievers'][n][f'top{k}']['per_relation'][r]['exact_match']:.2f}"
               for n in names]] for r in relations]
    return header, rows


def _bucket_table(buckets: Mapping, count: str, columns: tuple[str, ...],
                  cells) -> tuple[list[str], list[list[object]]]:
    """Rows = buckets (name, hyperlink range, ``count``), then per reader the ``columns`` that
    ``cells(scores)`` formats ("-" where the bucket is empty)."""
    first = next(iter(buckets["buckets"].values()), None)
    readers = list(first["readers"]) if first else []
    header = ["bucket", "hyperlinks", count, *[f"{r} {m}" for r in readers for m in columns]]
    rows: list[list[object]] = []
    for name, b in buckets["buckets"].items():
        span = f"{b['hyperlinks'][0]}-{b['hyperlinks'][1]}" if b["hyperlinks"] else "-"
        row: list[object] = [name, span, b[count]]
        for reader in readers:
            s = b["readers"][reader]
            row += cells(s) if s else ["-"] * len(columns)
        rows.append(row)
    return header, rows


def bucket_rows(buckets: Mapping) -> tuple[list[str], list[list[object]]]:
    """SQuAD dev EM/F1 per subject-frequency bucket (rows) and reader (column pairs)."""
    return _bucket_table(buckets, "questions", ("EM", "F1"),
                         lambda s: [f"{s['exact_match']:.2f}", f"{s['f1']:.2f}"])


def _drop_cells(s: Mapping) -> list[object]:
    """EM on orig and para and the EM drop with its CI, of one reader on a subset of pairs."""
    em = s["exact_match"]
    return [f"{em['orig']:.2f}", f"{em['para']:.2f}",
            f"{em['drop']:+.2f} [{em['ci_low']:+.2f}, {em['ci_high']:+.2f}]"]


#: How the readers report names the groups of :data:`tasks.paraphrase.edits.EDIT_GROUPS`.
EDIT_GROUP_LABELS = {
    "all": "any (the whole set)",
    "removes_answer_sentence_word": "drops a word of the answer's sentence",
    "adds_context_word": "adds a word of another sentence of the context",
    "other_content_change": "changes other content words",
    "no_content_change": "changes no content word",
}


def edit_group_rows(groups: Mapping) -> tuple[list[str], list[list[object]]]:
    """A paraphrased set per edit group (rows): pairs, then each reader's EM on orig and para
    and the EM drop with its CI (column triples; "-" where a group is empty)."""
    first = next(iter(groups["groups"].values()), None)
    readers = list(first["readers"]) if first else []
    columns = ("EM orig", "EM para", "EM drop [CI]")
    header = ["the paraphrase", "pairs", *[f"{r} {m}" for r in readers for m in columns]]
    rows: list[list[object]] = []
    for name, g in groups["groups"].items():
        row: list[object] = [EDIT_GROUP_LABELS.get(name, name), g["pairs"]]
        for reader in readers:
            row += _drop_cells(g["readers"][reader]) if g["readers"][reader] else ["-"] * 3
        rows.append(row)
    return header, rows


def paraphrase_bucket_rows(buckets: Mapping) -> tuple[list[str], list[list[object]]]:
    """A paraphrased set per subject-frequency bucket (rows): each reader's EM on orig and para
    and the EM drop with its CI (column triples)."""

    return _bucket_table(buckets, "pairs", ("EM orig", "EM para", "EM drop [CI]"),
                         _drop_cells)
