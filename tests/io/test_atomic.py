"""Atomic artifact writes: a failure leaves the old artifact (or nothing), never a partial one."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tasks.io.atomic import atomic_dir, atomic_write, remove_stale_temporaries, write_json

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def test_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "out.json"
    write_json(target, {"v": 1})
    with pytest.raises(RuntimeError), atomic_write(target) as handle:
        handle.write('{"v": 2, "trunc')
        raise RuntimeError("crash mid-write")
    assert target.read_text(encoding="utf-8").replace(" ", "").startswith('{"v":1')
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_written_files_and_dirs_get_umask_permissions_not_0600(tmp_path):
    old = os.umask(0o022)
    try:
        with atomic_write(tmp_path / "report.html") as handle:
            handle.write("<html></html>")
        with atomic_dir(tmp_path / "index") as building:
            (building / "part").write_text("x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "report.html").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "index").stat().st_mode) == 0o755


def test_atomic_dir_replaces_only_when_complete(tmp_path):
    target = tmp_path / "index"
    with atomic_dir(target) as building:
        (building / "a").write_text("old")
    with pytest.raises(RuntimeError), atomic_dir(target) as building:
        (building / "a").write_text("new, half done")
        raise RuntimeError("killed")
    assert (target / "a").read_text() == "old"
    with atomic_dir(target) as building:
        (building / "a").write_text("new")
    assert (target / "a").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]


_KILLED_WRITER = """
import sys, time
from tasks.io.atomic import atomic_dir, atomic_write
with atomic_write(sys.argv[1]) as handle, atomic_dir(sys.argv[2]) as building:
    handle.write("complete, but never renamed into place")
    (building / "part").write_text("x")
    handle.flush()
    print("written", flush=True)
    time.sleep(600)
"""


def _killed_writer(target, index) -> subprocess.Popen:
    """A process that wrote ``target``'s and ``index``'s temporaries, killed by SIGKILL
    before renaming them (left unreaped: a zombie, as a killed stage worker can be)."""
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(target), str(index)],
                            stdout=subprocess.PIPE, text=True, cwd=PROJECT_ROOT)
    assert proc.stdout.readline().strip() == "written"
    proc.send_signal(signal.SIGKILL)
    stat_file = Path(f"/proc/{proc.pid}/stat")
    deadline = time.monotonic() + 30
    while stat_file.exists() and stat_file.read_text().rsplit(")", 1)[1].split()[0] != "Z":
        assert time.monotonic() < deadline, "the killed writer did not die"
        time.sleep(0.05)
    return proc


def test_the_next_writer_removes_what_a_killed_writer_left_and_nothing_else(tmp_path):
    target, index = tmp_path / "topk.md", tmp_path / "index"
    killed = _killed_writer(target, index)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert [n.split(".")[1:3] for n in left] == [["index", str(killed.pid)],
                                                 ["topk", "md"]]
    assert not target.exists() and not index.exists()  # nothing that looks complete
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:  # a running writer's temporary, and a hidden file no writer of ours named
        running = tmp_path / f".topk.md.{live.pid}.abcdefgh.tmp"
        running.write_text("being written")
        foreign = tmp_path / ".topk.md.notapid.tmp"
        foreign.write_text("someone else's")
        # a temporary that the killed writer left of another target, "topk.md.<its pid>"
        other_target = tmp_path / f".topk.md.{killed.pid}.{killed.pid}.abcdefgh.tmp"
        other_target.write_text("another target's")
        write_json(target, {"v": 1})
        with atomic_dir(index) as building:
            (building / "part").write_text("y")
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            [running.name, foreign.name, other_target.name, "index", "topk.md"])
    finally:
        live.kill()
        live.wait()
        killed.wait()
    assert remove_stale_temporaries(target) == 1  # the live writer is gone now
    assert not running.exists() and foreign.exists() and other_target.exists()
    assert remove_stale_temporaries(tmp_path / f"topk.md.{killed.pid}") == 1
    assert not other_target.exists()
