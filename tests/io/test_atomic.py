"""Atomic artifact writes: a failure leaves the old artifact (or nothing), never a partial one."""

from __future__ import annotations

import os
import stat

import pytest

from tasks.io.atomic import atomic_dir, atomic_write, write_json


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
