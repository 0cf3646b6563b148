"""Restartable sharded encoding: SIGKILL mid-way, run again, get what one run would give.

A subprocess encodes 8 small shards with a test hook that sleeps between writing a shard's
vectors and its ids file; it is killed (SIGKILL) once 3 shards are reported done. The second
run (in this process) must encode only the shards that were not finished, leave the finished
ones untouched, and produce the same index and search results as an uninterrupted run.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
from dense_testkit import tiny_bert, tiny_passages

from tasks.io.passages import write_passages
from tasks.retrieval import dense_shards
from tasks.retrieval.dense_shards import encode_shards, ids_path, shard_path
from tasks.retrieval.encoders import encode_questions, resolve_encoder_spec
from tasks.retrieval.faiss_index import DenseIndex, build_faiss_index, dense_search

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SHARD_SIZE, MAX_LENGTH, SHARDS = 3, 64, 8
SCRIPT = """
import sys
from pathlib import Path

import tasks  # noqa: F401
from tasks.retrieval.dense_shards import encode_shard, plan_shards, shard_path
from tasks.retrieval.encoders import resolve_encoder_spec

passages, shards, model = map(Path, sys.argv[1:4])
spec = resolve_encoder_spec(str(model), max_length=int(sys.argv[5]))
print("started", flush=True)
for number, (start, end) in enumerate(plan_shards(passages, int(sys.argv[4]))):
    encode_shard(passages, start, end, shard_path(shards, number), spec, batch_size=4,
                 device="cpu")
    print(f"done {number}", flush=True)
"""


def _kill_after(args: list[str], done_lines: int, timeout: float = 120) -> None:
    env = dict(os.environ, **{dense_shards.SLEEP_ENV: "0.3"},
               PYTHONPATH=os.pathsep.join([str(PROJECT_ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, *args], cwd=PROJECT_ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout],
                     daemon=True).start()
    deadline, done = time.monotonic() + timeout, 0
    try:
        while done < done_lines:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            done += line.startswith("done")
        assert proc.poll() is None, "the encoder finished before it could be killed"
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    except queue.Empty:
        proc.kill()
        raise AssertionError(f"no progress from the encoder: {proc.stderr.read()}") from None


def test_killed_encoding_resumes_and_matches_an_uninterrupted_run(tmp_path):
    model = tiny_bert(tmp_path / "tiny-bert")
    passages = tmp_path / "psgs_w100.tsv"
    write_passages(passages, tiny_passages())  # 24 passages: 8 shards of 3
    shards = tmp_path / "shards"
    _kill_after([str(passages), str(shards), str(model), str(SHARD_SIZE), str(MAX_LENGTH)],
                done_lines=3)

    finished = sorted(p for p in shards.glob("shard_*.npy") if ids_path(p).exists())
    assert 3 <= len(finished) < SHARDS
    stamps = {p.name: (p.stat().st_mtime_ns, ids_path(p).stat().st_mtime_ns) for p in finished}

    spec = resolve_encoder_spec(str(model), max_length=MAX_LENGTH)
    dense_shards.ENCODED.clear()
    resumed = encode_shards(passages, shards, spec, SHARD_SIZE, batch_size=4, device="cpu")
    expected = [shard_path(shards, n).name for n in range(SHARDS)
                if shard_path(shards, n).name not in stamps]
    assert expected == dense_shards.ENCODED  # finished shards were not encoded again
    assert {p.name: (p.stat().st_mtime_ns, ids_path(p).stat().st_mtime_ns)
            for p in finished} == stamps
    assert not list(shards.glob(".*.tmp"))  # the killed writer's temporary file is gone

    dense_shards.ENCODED.clear()
    again = encode_shards(passages, shards, spec, SHARD_SIZE, batch_size=4, device="cpu")
    assert dense_shards.ENCODED == [] and again == resumed  # a finished job does nothing

    reference = encode_shards(passages, tmp_path / "reference", spec, SHARD_SIZE,
                              batch_size=4, device="cpu")
    index = build_faiss_index(resumed, tmp_path / "index", model_fingerprint=spec.fingerprint)
    ref_index = build_faiss_index(reference, tmp_path / "ref-index")
    a, b = DenseIndex.open(index), DenseIndex.open(ref_index)
    assert a.manifest["fingerprint"] == b.manifest["fingerprint"]
    assert a.ids.tolist() == b.ids.tolist() == [p.id for p in tiny_passages()]
    np.testing.assert_array_equal(a.index.reconstruct_n(0, 24), b.index.reconstruct_n(0, 24))

    queries = encode_questions(spec, ["Where was Ada Lindqvist born?", "Who is a poet?"],
                               ["q1", "q2"], device="cpu")
    assert dense_search(index, queries, k=5) == dense_search(ref_index, queries, k=5)
