"""Benchmark: EntityQuestions questions built per second from T-REx JSON, and memory vs size.

1. Demo world (generated into a temp dir): the T-REx -> facts -> questions step alone, and the
   whole construction (splits, buckets, linking, no-overlap, writers, DPR JSON) without Prefect.
2. A synthetic T-REx file generated here (a JSON array of documents in the real layout: text,
   word/sentence boundaries, entities, triples over the 24 relations; the same facts recur
   across documents as in T-REx). Fact collection runs in a fresh process on files of 1/4,
   1/2 and 1x ``--size-mb``; each reports its peak RSS, which must stay flat as the file grows
   (documents are streamed; memory follows the number of distinct facts, which is bounded by
   the synthetic universe, not the file size). The bare baseline streams the same file with
   ijson and does nothing else; the ratio ours/bare is the cost of validation and collection.

``--size-mb 1024`` reproduces the issue's 1 GB figure (needs ~1.8 GB of disk for the three
files and a few minutes); the default is small for a quick run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ENTITY = "http://www.wikidata.org/entity/"
PROP = "http://www.wikidata.org/prop/direct/"
SYLLABLES = ["ka", "lo", "mi", "ra", "ven", "tor", "is", "an", "bel", "dur", "sa", "en", "or",
             "ul", "fa", "gri", "po", "ne", "wyn", "zo"]


def _name(rng: random.Random, parts: int) -> str:
    return " ".join("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).title()
                    for _ in range(parts))


def write_universe(path: Path, n_subjects: int, n_objects: int, seed: int = 0) -> None:
    """Entity labels (JSONL) for the synthetic subjects (Q1...) and objects (Q9000001...)."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as out:
        for i in range(1, n_subjects + 1):
            out.write(json.dumps({"id": f"Q{i}", "label": _name(rng, 2), "aliases": []}) + "\n")
        for i in range(n_objects):
            out.write(json.dumps({"id": f"Q{9_000_001 + i}", "label": _name(rng, 1),
                                  "aliases": [_name(rng, 1)]}) + "\n")


def synthetic_document(rng: random.Random, index: int, relations: list[str], n_subjects: int,
                       n_objects: int) -> dict:
    """One T-REx-shaped document about a subject, with 3-8 aligned triples."""
    subject = rng.randint(1, n_subjects)
    subject_form = f"Subject{subject}"
    text_parts, triples, entities, sentences = [], [], [], []
    offset = 0
    for sentence_id in range(rng.randint(3, 8)):
        relation = relations[(subject * 7 + sentence_id * 13) % len(relations)]
        obj = 9_000_001 + (subject * 31 + sentence_id) % n_objects  # same fact every time
        object_form = f"Object{obj}"
        filler = " ".join(rng.choice(SYLLABLES) for _ in range(rng.randint(8, 20)))
        sentence = f"{subject_form} {filler} {object_form}."
        s0, o0 = offset, offset + len(subject_form) + len(filler) + 2
        sub = {"boundaries": [s0, s0 + len(subject_form)], "surfaceform": subject_form,
               "uri": f"{ENTITY}Q{subject}", "annotator": "Me"}
        ob = {"boundaries": [o0, o0 + len(object_form)], "surfaceform": object_form,
              "uri": f"{ENTITY}Q{obj}", "annotator": "Wikidata_Spotlight_Entity_Linker"}
        entities += [sub, ob]
        triples.append({"sentence_id": sentence_id, "subject": sub,
                        "predicate": {"boundaries": None, "surfaceform": None,
                                      "uri": PROP + relation, "annotator": "Simple-Aligner"},
                        "object": ob, "dependency_path": None, "confidence": 0.9,
                        "annotator": "SPOAligner"})
        sentences.append([offset, offset + len(sentence)])
        text_parts.append(sentence)
        offset += len(sentence) + 1
    text = " ".join(text_parts)
    words, pos = [], 0
    for word in text.split(" "):
        words.append([pos, pos + len(word)])
        pos += len(word) + 1
    return {"docid": str(index), "uri": f"{ENTITY}Q{subject}", "title": subject_form,
            "text": text, "words_boundaries": words, "sentences_boundaries": sentences,
            "entities": entities, "triples": triples}


def write_synthetic_trex(path: Path, size_mb: float, relations: list[str], n_subjects: int,
                         n_objects: int, seed: int = 0) -> tuple[int, int]:
    """Stream documents into a JSON array until ``size_mb``; return (documents, bytes)."""
    rng = random.Random(seed)
    limit = int(size_mb * 1024 * 1024)
    written = docs = 0
    with open(path, "w", encoding="utf-8") as out:
        out.write("[")
        while written < limit:
            chunk = json.dumps(synthetic_document(rng, docs, relations, n_subjects, n_objects))
            out.write(("\n" if docs == 0 else ",\n") + chunk)
            written += len(chunk) + 2
            docs += 1
        out.write("\n]\n")
    return docs, path.stat().st_size


def peak_rss_mb() -> float:
    """Peak resident memory of this process in MiB (``VmHWM``: reset by exec, unlike
    ``ru_maxrss``, which a child started from a large parent inherits)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def measure(trex: Path, labels: Path, mode: str) -> dict:
    """Run in a fresh process: collect facts and render questions (ours) or bare ijson.

    Imports happen before the clock starts; reading the entity labels (streamed, keeping the
    entities the facts need) is part of ours.
    """
    import ijson

    from tasks.config import EQ_RELATIONS
    from tasks.questions.facts import collect_facts
    from tasks.questions.templates import render_question

    start = time.perf_counter()
    if mode == "bare":
        with open(trex, "rb") as stream:
            triples = sum(len(doc["triples"]) for doc in ijson.items(stream, "item"))
        questions = 0
    else:
        collection = collect_facts([trex], labels, EQ_RELATIONS)
        questions = sum(len(render_question(f.relation, f.subject_label)) > 0
                        for facts in collection.by_relation.values() for f in facts)
        triples = collection.triples_seen
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "triples": triples, "questions": questions,
            "peak_rss_mb": peak_rss_mb()}


def _child(trex: Path, labels: Path, mode: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--measure", str(trex), str(labels), mode],
                         check=True, capture_output=True, text=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_demo(profile: str, work: Path) -> None:
    from flows.entity_questions import construct
    from tasks.demo import generate_demo_world
    from tasks.io.tables import read_table
    from tasks.layout import Layout
    from tasks.params_loading import load_params

    overrides = {f"paths.{name}": str(work / "demo" / name)
                 for name in ("data", "results", "metrics", "plots", "reports", "state")}
    params = load_params(ROOT / "params.yaml", profile=profile, overrides=overrides)
    params = params.model_copy(update={"entity_questions": params.entity_questions.model_copy(
        update={"dpr_hard_negatives": 0})})  # no JVM in this benchmark
    generate_demo_world(params.demo_world, params.paths.raw)
    layout = Layout(params)
    files = layout.trex_files()
    size = sum(p.stat().st_size for p in files) / 2**20
    labels = params.raw_path("entity_labels")
    collect = min((measure_files(files, labels) for _ in range(3)), key=lambda r: r["seconds"])
    start = time.perf_counter()
    construct(params, plain=True)
    seconds = time.perf_counter() - start
    rows = read_table(layout.questions_table).num_rows
    print(f"demo world ({profile}): {len(files)} T-REx file(s), {size:.1f} MiB, "
          f"{collect['triples']} triples of the 24 relations")
    print(f"  T-REx -> facts -> questions: {collect['questions']} questions in "
          f"{collect['seconds']:.2f} s = {collect['questions'] / collect['seconds']:,.0f} "
          f"questions/s ({collect['triples'] / collect['seconds']:,.0f} triples/s)")
    print(f"  whole construction (plain steps, no BM25 negatives): {rows} questions in all "
          f"files in {seconds:.2f} s = {rows / seconds:,.0f} questions/s")


def measure_files(files: list[Path], labels: Path) -> dict:
    from tasks.config import EQ_RELATIONS
    from tasks.questions.facts import collect_facts
    from tasks.questions.templates import render_question

    start = time.perf_counter()
    collection = collect_facts(files, labels, EQ_RELATIONS)
    questions = [render_question(f.relation, f.subject_label)
                 for facts in collection.by_relation.values() for f in facts]
    return {"seconds": time.perf_counter() - start, "questions": len(questions),
            "triples": collection.triples_seen}


def bench_synthetic(size_mb: float, work: Path, n_subjects: int, n_objects: int) -> None:
    from tasks.config import EQ_RELATIONS

    labels = work / "entity_labels.jsonl"
    write_universe(labels, n_subjects, n_objects)
    print(f"synthetic T-REx: universe of {n_subjects:,} subjects x 24 relations, "
          f"{n_objects:,} objects")
    rows = []
    for fraction in (0.25, 0.5, 1.0):
        path = work / f"re-nlg_synthetic_{fraction:g}.json"
        start = time.perf_counter()
        docs, size = write_synthetic_trex(path, size_mb * fraction, list(EQ_RELATIONS),
                                          n_subjects, n_objects)
        generated = time.perf_counter() - start
        ours, bare = _child(path, labels, "ours"), _child(path, labels, "bare")
        rows.append((fraction, size, docs, generated, ours, bare))
        path.unlink()
    print(f"{'size':>10} {'docs':>9} {'triples':>10} {'questions':>9} {'q/s':>9} "
          f"{'triples/s':>10} {'MiB/s':>6} {'bare MiB/s':>10} {'ratio':>6} "
          f"{'peak RSS':>9} {'bare RSS':>9}")
    for fraction, size, docs, _generated, ours, bare in rows:
        mib = size / 2**20
        print(f"{mib:8.1f}Mi {docs:9,} {ours['triples']:10,} {ours['questions']:9,} "
              f"{ours['questions'] / ours['seconds']:9,.0f} "
              f"{ours['triples'] / ours['seconds']:10,.0f} {mib / ours['seconds']:6.1f} "
              f"{mib / bare['seconds']:10.1f} {bare['seconds'] / ours['seconds']:6.2f} "
              f"{ours['peak_rss_mb']:7.0f}Mi {bare['peak_rss_mb']:7.0f}Mi"
              f"   ({fraction:g}x)")
    growth = rows[-1][4]["peak_rss_mb"] / rows[0][4]["peak_rss_mb"]
    print(f"peak RSS 1x / 0.25x: {growth:.2f} (file 4x larger; flat means ~1.0). Memory is a "
          "constant plus one record per distinct fact (the questions column), never the file.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=float, default=32,
                        help="synthetic T-REx size in MiB (1024 = the issue's 1 GB figure)")
    parser.add_argument("--subjects", type=int, default=None,
                        help="synthetic subject universe, which bounds the distinct facts "
                             "(default: 5 per MiB, at least 500, so that the 1/4-size file "
                             "already holds nearly every fact)")
    parser.add_argument("--objects", type=int, default=5_000, help="synthetic object universe")
    parser.add_argument("--profile", default="demo",
                        help="demo-world profile for the demo part (smoke|demo)")
    parser.add_argument("--skip-demo", action="store_true", help="only the synthetic part")
    parser.add_argument("--work", type=Path, help="scratch directory (default: a temp dir)")
    parser.add_argument("--measure", nargs=3, metavar=("TREX", "LABELS", "MODE"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        trex, labels, mode = args.measure
        print(json.dumps(measure(Path(trex), Path(labels), mode)))
        return
    work = args.work or Path(tempfile.mkdtemp(prefix="qastress-bench-questions-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"machine: {platform.platform()}, {os.cpu_count()} CPUs, python "
          f"{platform.python_version()}")
    if not args.skip_demo:
        bench_demo(args.profile, work)
    subjects = args.subjects or max(500, int(args.size_mb * 5))
    bench_synthetic(args.size_mb, work, subjects, args.objects)


if __name__ == "__main__":
    main()
