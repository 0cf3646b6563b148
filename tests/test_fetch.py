"""Downloads against a loopback HTTP server only: checksums, resume with Range, retries,
dropped connections, files already in place."""

from __future__ import annotations

import hashlib

import pytest
from file_server import serving

from tasks.fetch_download import ChecksumMismatch, DownloadError, download

PAYLOAD = bytes(range(256)) * 400  # 102,400 bytes
PAYLOAD_SHA = hashlib.sha256(PAYLOAD).hexdigest()


@pytest.fixture
def server():
    with serving() as state:
        yield state


def test_download_with_checksum(server, tmp_path, capsys):
    server.files["/data/file.bin"] = PAYLOAD
    dest = tmp_path / "out" / "file.bin"
    got = download(server.url("/data/file.bin"), dest, sha256=PAYLOAD_SHA.upper(),
                   progress="always")
    assert got == dest and dest.read_bytes() == PAYLOAD
    assert not dest.with_name("file.bin.part").exists()
    assert PAYLOAD_SHA in capsys.readouterr().err
    assert server.hits("/data/file.bin")[0]["User-Agent"].startswith("qastress-fetch")


def test_unpinned_download_prints_sha256(server, tmp_path, capsys):
    server.files["/f"] = b"hello"
    download(server.url("/f"), tmp_path / "f", progress=False)
    assert hashlib.sha256(b"hello").hexdigest() in capsys.readouterr().err


def test_checksum_mismatch_leaves_nothing(server, tmp_path):
    server.files["/file.bin"] = PAYLOAD
    dest = tmp_path / "file.bin"
    with pytest.raises(ChecksumMismatch) as info:
        download(server.url("/file.bin"), dest, sha256="0" * 64, progress=False)
    message = str(info.value)
    assert "file.bin" in message and "0" * 64 in message and PAYLOAD_SHA in message
    assert not dest.exists()
    assert not dest.with_name("file.bin.part").exists()


def test_resume_sends_range(server, tmp_path):
    server.files["/file.bin"] = PAYLOAD
    dest = tmp_path / "file.bin"
    dest.with_name("file.bin.part").write_bytes(PAYLOAD[:1000])
    download(server.url("/file.bin"), dest, sha256=PAYLOAD_SHA, progress=False)
    assert dest.read_bytes() == PAYLOAD
    assert [h.get("Range") for h in server.hits("/file.bin")] == ["bytes=1000-"]


def test_server_ignoring_range_restarts(server, tmp_path):
    server.files["/file.bin"] = PAYLOAD
    server.ignore_range.add("/file.bin")
    dest = tmp_path / "file.bin"
    dest.with_name("file.bin.part").write_bytes(PAYLOAD[:1000])
    download(server.url("/file.bin"), dest, sha256=PAYLOAD_SHA, progress=False)
    assert dest.read_bytes() == PAYLOAD
    assert server.hits("/file.bin")[0]["Range"] == "bytes=1000-"


def test_complete_part_file_is_accepted(server, tmp_path):
    server.files["/file.bin"] = PAYLOAD
    dest = tmp_path / "file.bin"
    dest.with_name("file.bin.part").write_bytes(PAYLOAD)  # server answers 416
    download(server.url("/file.bin"), dest, sha256=PAYLOAD_SHA, progress=False)
    assert dest.read_bytes() == PAYLOAD


def test_404_fails_without_retry(server, tmp_path):
    with pytest.raises(DownloadError) as info:
        download(server.url("/missing.bin"), tmp_path / "m.bin", progress=False, backoff=0.01)
    assert info.value.status == 404
    assert "404" in str(info.value) and "/missing.bin" in str(info.value)
    assert len(server.hits("/missing.bin")) == 1
    assert not (tmp_path / "m.bin").exists()


def test_500_is_retried(server, tmp_path):
    server.files["/flaky.bin"] = PAYLOAD
    server.fail["/flaky.bin"] = 1
    download(server.url("/flaky.bin"), tmp_path / "f.bin", sha256=PAYLOAD_SHA, progress=False,
             backoff=0.01)
    assert (tmp_path / "f.bin").read_bytes() == PAYLOAD
    assert len(server.hits("/flaky.bin")) == 2


def test_persistent_500_gives_up(server, tmp_path):
    server.files["/down.bin"] = PAYLOAD
    server.fail["/down.bin"] = 10
    with pytest.raises(DownloadError, match="gave up after 3 attempt"):
        download(server.url("/down.bin"), tmp_path / "d.bin", retries=2, progress=False,
                 backoff=0.01)
    assert len(server.hits("/down.bin")) == 3


def test_dropped_connection_resumes(server, tmp_path):
    server.files["/big.bin"] = PAYLOAD
    server.drop_after["/big.bin"] = 30_000
    dest = tmp_path / "big.bin"
    download(server.url("/big.bin"), dest, sha256=PAYLOAD_SHA, progress=False, backoff=0.01)
    assert dest.read_bytes() == PAYLOAD
    assert [h.get("Range") for h in server.hits("/big.bin")] == [None, "bytes=30000-"]


def test_existing_dest_not_downloaded_again(server, tmp_path):
    dest = tmp_path / "file.bin"
    dest.write_bytes(PAYLOAD)
    download(server.url("/file.bin"), dest, sha256=PAYLOAD_SHA, progress=False)
    download(server.url("/file.bin"), dest, progress=False)
    assert server.requests == []


def test_existing_dest_with_wrong_checksum_is_replaced(server, tmp_path):
    server.files["/file.bin"] = PAYLOAD
    dest = tmp_path / "file.bin"
    dest.write_bytes(b"stale")
    download(server.url("/file.bin"), dest, sha256=PAYLOAD_SHA, progress=False)
    assert dest.read_bytes() == PAYLOAD
