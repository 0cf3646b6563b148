"""Safe extraction of downloaded archives: unsafe members refused, nothing half-written."""

from __future__ import annotations

import gzip

import pytest
from archive_builders import files_under, make_tar, make_zip

from tasks.fetch_archives import UnsafeArchiveMember, safe_extract


@pytest.mark.parametrize("member", ["../evil.txt", "sub/../../evil.txt", "/abs_evil.txt",
                                    "C:/evil.txt"])
def test_zip_unsafe_member_refused(tmp_path, member):
    archive = make_zip(tmp_path / "bad.zip", {"ok.txt": b"fine", member: b"evil"})
    target = tmp_path / "out"
    with pytest.raises(UnsafeArchiveMember) as info:
        safe_extract(archive, target)
    assert "bad.zip" in str(info.value) and member in str(info.value)
    assert files_under(target) == []
    assert not (tmp_path / "evil.txt").exists()


def test_tar_absolute_member_refused(tmp_path):
    archive = make_tar(tmp_path / "abs.tar.gz", [("ok.txt", b"x", None),
                                                 ("/tmp/qastress-evil.txt", b"x", None)])
    with pytest.raises(UnsafeArchiveMember, match="absolute path"):
        safe_extract(archive, tmp_path / "out")
    assert files_under(tmp_path / "out") == []


@pytest.mark.parametrize("members", [
    [("link", None, "../../outside"), ("link/evil.txt", b"x", None)],
    [("link", None, "/etc"), ("ok.txt", b"x", None)],
    # each link looks harmless alone; together l1 resolves to the parent of the target
    [("l2", None, "."), ("l1", None, "l2/.."), ("l1/evil.txt", b"x", None)],
])
def test_tar_symlink_escape_refused(tmp_path, members):
    archive = make_tar(tmp_path / "links.tar.gz", [("ok/a.txt", b"x", None), *members])
    with pytest.raises(UnsafeArchiveMember) as info:
        safe_extract(archive, tmp_path / "out")
    assert "links.tar.gz" in str(info.value)
    assert files_under(tmp_path / "out") == []
    assert not (tmp_path / "evil.txt").exists()


def test_zip_extracted(tmp_path):
    archive = make_zip(tmp_path / "good.zip", {"dataset/train/P19.json": b"[1]",
                                               "dataset/dev/P19.json": b"[2]", "top.txt": b"t"})
    target = tmp_path / "out"
    (target / "dataset").mkdir(parents=True)
    (target / "dataset" / "stale.json").write_text("old")
    (target / "keep.txt").write_text("untouched")
    outputs = safe_extract(archive, target)
    assert sorted(p.name for p in outputs) == ["dataset", "top.txt"]
    assert (target / "dataset" / "train" / "P19.json").read_bytes() == b"[1]"
    assert not (target / "dataset" / "stale.json").exists()  # replaced as a whole
    assert (target / "keep.txt").read_text() == "untouched"
    assert not [p for p in target.iterdir() if p.name.startswith(".")]


def test_tar_with_inner_symlink_and_strip(tmp_path):
    archive = make_tar(tmp_path / "pkg-1.0.tar.gz", [
        ("pkg-1.0/data/a.txt", b"alpha", None),
        ("pkg-1.0/latest.txt", None, "data/a.txt"),
    ])
    outputs = safe_extract(archive, tmp_path / "out", strip_components=1)
    assert sorted(p.name for p in outputs) == ["data", "latest.txt"]
    assert (tmp_path / "out" / "latest.txt").read_bytes() == b"alpha"


def test_gz_single_file(tmp_path):
    archive = tmp_path / "psgs.tsv.gz"
    archive.write_bytes(gzip.compress(b"id\ttext\ttitle\n"))
    assert safe_extract(archive, tmp_path / "out") == [tmp_path / "out" / "psgs.tsv"]
    assert (tmp_path / "out" / "psgs.tsv").read_bytes() == b"id\ttext\ttitle\n"
