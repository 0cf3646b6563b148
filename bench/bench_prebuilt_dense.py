"""Benchmark: adopting and opening a prebuilt dense index vs bare FAISS and Python doing the
same reads.

Writes a flat inner-product index of ``--rows`` random vectors and its ``docid`` file in
Pyserini's layout (no manifest), then times, in the same process, interleaved, best of
``--repeats``, one step after the other:

(a) adopt: ``tasks.retrieval.prebuilt_dense.adopt_dense_index`` (maps the FAISS file, checks
    its metric, reads the ids, checks one per row, none empty, none repeated, fingerprints
    them, writes the manifest) vs bare: ``faiss.read_index`` mapped + the ids read and put in
    a ``set``;
(b) open: ``DenseIndex.open`` on the adopted directory (manifest, mapped FAISS file, ids as an
    array) vs bare: ``faiss.read_index`` mapped + ``numpy.array`` of the ids.

The real ``wikipedia-dpr-100w`` indexes hold 21,015,320 rows: the seconds per million ids
printed here scale to them (the FAISS file is mapped, not read, so its size does not count).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=2_000_000,
                        help="index rows and passage ids (default: %(default)s)")
    parser.add_argument("--dim", type=int, default=16,
                        help="vector dimension; small, since the mapped file is not read "
                        "(default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="timed repetitions (best kept; default: %(default)s)")
    args = parser.parse_args()

    import faiss
    import numpy as np

    from tasks.retrieval.encoder_spec import EncoderSpec
    from tasks.retrieval.faiss_index import DenseIndex
    from tasks.retrieval.prebuilt_dense import adopt_dense_index, source_stamp

    work = Path(tempfile.mkdtemp(prefix="qastress-bench-prebuilt-"))
    source = work / "prebuilt"
    source.mkdir()
    index = faiss.IndexFlatIP(args.dim)
    rng = np.random.default_rng(0)
    for start in range(0, args.rows, 1_000_000):
        index.add(rng.standard_normal((min(1_000_000, args.rows - start), args.dim),
                                      dtype=np.float32))
    faiss.write_index(index, str(source / "index"))
    del index
    (source / "docid").write_text("".join(f"{i + 1}\n" for i in range(args.rows)),
                                  encoding="utf-8")
    spec = EncoderSpec(name="bench", kind="dpr", question_model="q", ctx_model="c",
                       pooling="pooler", max_length=32, normalize=False, fingerprint="b" * 64)
    flags = faiss.IO_FLAG_MMAP_IFC | faiss.IO_FLAG_READ_ONLY
    adopted = work / "adopted"

    def ours_adopt() -> int:
        shutil.rmtree(adopted, ignore_errors=True)
        adopt_dense_index(str(source), adopted, spec, source_stamp(source))
        return args.rows

    def bare_adopt() -> int:
        mapped = faiss.read_index(str(source / "index"), flags)
        with open(source / "docid", encoding="utf-8") as handle:
            ids = handle.read().splitlines()
        assert len(set(ids)) == len(ids) == mapped.ntotal
        return len(ids)

    def ours_open() -> int:
        return len(DenseIndex.open(adopted).ids)

    def bare_open() -> int:
        mapped = faiss.read_index(str(source / "index"), flags)
        with open(source / "docid", encoding="utf-8") as handle:
            ids = np.array(handle.read().splitlines())
        assert len(ids) == mapped.ntotal
        return len(ids)

    runners = {"adopt, ours": ours_adopt, "adopt, bare": bare_adopt,
               "open, ours": ours_open, "open, bare": bare_open}
    best: dict[str, float] = {}
    # one phase per step, ours and bare alternating in it: what a runner frees (millions of
    # strings) costs the next one's allocations, so each runner follows its own rival
    for phase in (("adopt, ours", "adopt, bare"), ("open, ours", "open, bare")):
        for _ in range(args.repeats):
            for name in phase:
                start = time.perf_counter()
                assert runners[name]() == args.rows
                best[name] = min(best.get(name, float("inf")), time.perf_counter() - start)
    print(f"machine: {platform.platform()}, {os.cpu_count()} CPUs, faiss {faiss.__version__}")
    print(f"index: flat, {args.rows:,} x {args.dim}, ids 1..{args.rows}; best of {args.repeats}")
    million = args.rows / 1e6
    for name, seconds in best.items():
        print(f"{name:>12}: {seconds:7.3f} s ({seconds / million:.3f} s per million ids)")
    for step in ("adopt", "open"):
        print(f"ratio ours/bare, {step}: {best[f'{step}, bare'] / best[f'{step}, ours']:.3f} "
              "(speed; >= 1 is as fast)")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
