"""SIGKILL the whole pipeline at two points, run it again: only unfinished work is redone and
the final report is byte-identical to the one of an uninterrupted run.

All runs use the same paths (the report prints the resolved params, paths included): an
uninterrupted `qastress run` first, its outputs moved aside and the paths wiped; then a run
killed (process group, SIGKILL, Prefect's temporary API included) once the BM25 index is
complete, a rerun killed once the BM25 retrieval metrics exist, and a final rerun. The two
optional stages after the kill points (retrieve-then-read, specialised question encoders) are
switched off: they run only in the uninterrupted run and the final rerun, which resume nothing
of theirs (their own tests cover them).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

PROJECT_ROOT = Path(__file__).resolve().parents[2]
PATH_NAMES = ("data", "results", "metrics", "plots", "reports", "state")


def _env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env["PREFECT_HOME"] = str(root / "prefect-home")  # this test's own Prefect database
    return env


def _study(params_file: Path, root: Path, kill_when: Path | None = None,
           timeout: float = 900) -> int:
    """Run `qastress run`; SIGKILL its process group once ``kill_when`` exists."""
    log = (root / "log.txt").open("a")
    proc = subprocess.Popen([str(Path(sys.executable).parent / "qastress"), "run", "--params",
                             str(params_file)], cwd=PROJECT_ROOT, env=_env(root), stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + timeout
    try:
        while proc.poll() is None:
            if kill_when is not None and kill_when.exists():
                os.killpg(proc.pid, signal.SIGKILL)
                return proc.wait(timeout=60)
            assert time.monotonic() < deadline, "the study did not finish in time"
            time.sleep(0.2)
        return proc.returncode
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


def _stamps(paths: list[Path]) -> dict[str, int]:
    return {str(p): p.stat().st_mtime_ns for p in paths}


def test_sigkill_at_two_points_then_rerun_gives_the_same_report(tmp_path):
    from tasks.config import load_params
    from tasks.layout import Layout

    work = tmp_path / "work"
    raw = yaml.safe_load((PROJECT_ROOT / "params.yaml").read_text(encoding="utf-8"))
    raw["profile"] = "smoke"
    raw["paths"] = {name: str(work / name) for name in PATH_NAMES}
    raw["retrieve_then_read"]["enabled"] = False
    raw["specialised_encoders"]["enabled"] = False
    # one stage at a time, as `dvc repro` and the real profile run them (the suite's smoke
    # study, tests/flows/conftest.py, runs them side by side)
    raw["profiles"]["smoke"]["orchestration"] = {"concurrent_stages": 1}
    params_file = tmp_path / "params.yaml"
    params_file.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    layout = Layout(load_params(params_file))

    assert _study(params_file, tmp_path) == 0, (tmp_path / "log.txt").read_text()[-3000:]
    reference = layout.report_html.read_bytes()
    reference_metrics = layout.retrieval_metrics("bm25").read_bytes()
    shutil.rmtree(work)

    first_kill = layout.bm25_index / "manifest.json"
    assert _study(params_file, tmp_path, kill_when=first_kill) == -signal.SIGKILL
    assert not layout.report_html.exists()
    done_before = [layout.raw / "manifest.json", first_kill]
    stamps = _stamps(done_before)

    second_kill = layout.retrieval_metrics("bm25")
    assert _study(params_file, tmp_path, kill_when=second_kill) == -signal.SIGKILL
    assert not layout.report_html.exists()
    assert _stamps([layout.raw / "manifest.json"]) == {str(done_before[0]): stamps[
        str(done_before[0])]}  # the finished demo world was not written again
    done_before = [layout.raw / "manifest.json", layout.questions_table,
                   layout.bm25_index / "manifest.json"]
    stamps = _stamps(done_before)

    assert _study(params_file, tmp_path) == 0, (tmp_path / "log.txt").read_text()[-3000:]
    assert _stamps(done_before) == stamps  # demo world, questions, BM25 index: kept
    assert layout.retrieval_metrics("bm25").read_bytes() == reference_metrics
    assert layout.report_html.read_bytes() == reference
