"""The source registry and `qastress data fetch`: sources end to end (plain, zip, gz, tar),
checksummed archives, source options and the CLI's errors, against a loopback HTTP server."""

from __future__ import annotations

import gzip
import hashlib
import io
import re
import zipfile
from pathlib import Path

import pytest
from archive_builders import make_tar
from file_server import serving

from tasks.fetch import fetch_source, list_sources, rebase_url
from tasks.fetch_archives import archive_kind
from tasks.fetch_download import ChecksumMismatch
from tasks.fetch_sources import SOURCES, RemoteFile, Source, UnknownSource, get_source


@pytest.fixture
def server():
    with serving() as state:
        yield state


def test_fetch_source_end_to_end(server, tmp_path, monkeypatch):
    server.files["/files/plain.txt"] = b"plain"
    zbuf = io.BytesIO()
    with zipfile.ZipFile(zbuf, "w") as zf:
        zf.writestr("dataset/test/P19.test.json", b"[]")
    server.files["/files/set.zip"] = zbuf.getvalue()
    server.files["/files/table.tsv.gz"] = gzip.compress(b"a\tb\n")
    tar_path = make_tar(tmp_path / "t.tar.gz", [("corpus-1.0/word_alignments.txt", b"q\tq\t0-0",
                                                 None)])
    server.files["/files/corpus.tar.gz"] = tar_path.read_bytes()
    fake = Source(name="fake", description="test source", dir="fakedir", files=(
        RemoteFile(url="https://example.invalid/files/plain.txt", dest="plain.txt",
                   sha256=hashlib.sha256(b"plain").hexdigest()),
        RemoteFile(url="https://example.invalid/files/set.zip", dest="set.zip", extract="zip"),
        RemoteFile(url="https://example.invalid/files/table.tsv.gz", dest="table.tsv.gz",
                   extract="gz"),
        RemoteFile(url="https://example.invalid/files/corpus.tar.gz", dest="corpus.tar.gz",
                   extract="tar", strip_components=1),
    ))
    monkeypatch.setitem(SOURCES, "fake", fake)
    root = tmp_path / "data"
    out = root / "raw" / "fakedir"
    paths = fetch_source("fake", root, base_url=server.base, progress=False)
    assert paths == [out / "plain.txt", out / "dataset", out / "table.tsv",
                     out / "word_alignments.txt"]
    assert (out / "dataset" / "test" / "P19.test.json").read_bytes() == b"[]"
    assert (out / "table.tsv").read_bytes() == b"a\tb\n"
    assert (out / "word_alignments.txt").read_bytes() == b"q\tq\t0-0"
    served = len(server.requests)
    assert served == 4

    # everything is in place: nothing is fetched again, same answer
    assert fetch_source("fake", root, base_url=server.base, progress=False) == paths
    assert len(server.requests) == served

    # archives may be dropped after unpacking; the marker still prevents a re-download
    (out / "table.tsv").unlink()
    paths = fetch_source("fake", root, base_url=server.base, only=["table.tsv"],
                         progress=False, keep_archives=False)
    assert paths == [out / "table.tsv"] and not (out / "table.tsv.gz").exists()
    assert len(server.requests) == served  # the .gz was still there: not downloaded again
    with pytest.raises(ValueError, match="no file"):
        fetch_source("fake", root, only=["nope.txt"], progress=False)


def test_an_md5_checked_archive_unpacks_and_a_wrong_one_is_deleted(server, tmp_path,
                                                                    monkeypatch, capsys):
    """Pyserini publishes md5 only: a prebuilt index's tarball (one top directory holding
    ``index`` and ``docid``) lands unpacked beside nothing else; a wrong md5 leaves nothing."""
    tar_path = make_tar(tmp_path / "idx.tar.gz", [("faiss.idx.1/index", b"faiss", None),
                                                  ("faiss.idx.1/docid", b"1\n2\n", None)])
    server.files["/indexes/idx.tar.gz"] = tar_path.read_bytes()
    md5 = hashlib.md5(tar_path.read_bytes()).hexdigest()

    def source(checksum: str) -> Source:
        return Source(name="index", description="test index", dir="idx", files=(
            RemoteFile(url="https://example.invalid/indexes/idx.tar.gz", dest="idx.tar.gz",
                       md5=checksum, extract="tar", strip_components=1),))

    monkeypatch.setitem(SOURCES, "index", source("0" * 32))
    root = tmp_path / "data"
    with pytest.raises(ChecksumMismatch, match=rf"idx\.tar\.gz: md5 mismatch: expected "
                                               rf"0{{32}}, got {md5}"):
        fetch_source("index", root, base_url=server.base, progress=False)
    assert sorted(p.name for p in (root / "raw" / "idx").iterdir()) == []
    monkeypatch.setitem(SOURCES, "index", source(md5.upper()))
    paths = fetch_source("index", root, base_url=server.base, progress=False)
    out = root / "raw" / "idx"
    assert sorted(paths) == [out / "docid", out / "index"]
    assert (out / "docid").read_bytes() == b"1\n2\n"
    assert f"md5 OK {md5}" in capsys.readouterr().err
    assert (out / "idx.tar.gz").exists()  # kept by default


def test_the_cli_can_drop_an_archive_once_unpacked(server, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from flows.cli import app

    tar_path = make_tar(tmp_path / "idx.tar.gz", [("top/index", b"faiss", None)])
    server.files["/indexes/idx.tar.gz"] = tar_path.read_bytes()
    monkeypatch.setitem(SOURCES, "index", Source(name="index", description="d", dir="idx", files=(
        RemoteFile(url="https://example.invalid/indexes/idx.tar.gz", dest="idx.tar.gz",
                   md5=hashlib.md5(tar_path.read_bytes()).hexdigest(), extract="tar",
                   strip_components=1),)))
    root = tmp_path / "data"
    result = CliRunner().invoke(app, ["data", "fetch", "index", "--data-root", str(root),
                                      "--base-url", server.base, "--drop-archives"])
    assert result.exit_code == 0, result.output
    out = root / "raw" / "idx"
    assert str(out / "index") in result.stdout and (out / "index").read_bytes() == b"faiss"
    assert not (out / "idx.tar.gz").exists()
    served = len(server.requests)
    again = CliRunner().invoke(app, ["data", "fetch", "index", "--data-root", str(root),
                                     "--base-url", server.base])
    assert again.exit_code == 0 and len(server.requests) == served  # the marker says unpacked


def test_the_cli_passes_source_options_and_reports_errors_in_one_line(server, tmp_path):
    """`-o size=xl` fetches the real profile's PPDB pack; an unknown source or option exits 2,
    a failed download 1, each with one `error:` line and no traceback."""
    import gzip

    from typer.testing import CliRunner

    from flows.cli import app

    server.files["/PPDB/eng/ppdb-2.0-xl-all.gz"] = gzip.compress(b"[X] ||| a ||| b |||\n")
    root = tmp_path / "data"
    runner = CliRunner()
    result = runner.invoke(app, ["data", "fetch", "ppdb", "-o", "size=xl", "--data-root",
                                 str(root), "--base-url", server.base])
    assert result.exit_code == 0, result.output
    assert (root / "raw" / "ppdb" / "ppdb-2.0-xl-all").read_bytes() == b"[X] ||| a ||| b |||\n"
    for args, code, message in [
            (["nosuch"], 2, "error: unknown data source 'nosuch'; known sources: "),
            (["ppdb", "-o", "size=huge"], 2, "error: PPDB size must be one of"),
            (["ppdb", "--option", "colour=red"], 2, "error: source 'ppdb' takes no option(s) "
             "['colour']"),
            (["ppdb", "-o", "size=m", "--base-url", server.base], 1,
             "error: download of " + server.url("/PPDB/eng/ppdb-2.0-m-all.gz") + " failed")]:
        result = runner.invoke(app, ["data", "fetch", *args, "--data-root", str(root)])
        assert result.exit_code == code, result.output
        assert message in result.output and "Traceback" not in result.output, result.output


def test_a_missing_raw_input_names_the_fetch_command_with_its_options():
    from tasks.fetch import fetch_command

    assert fetch_command("ppdb/ppdb-2.0-xl-all") == "qastress data fetch ppdb --option size=xl"
    assert fetch_command("ppdb/ppdb-2.0-s-lexical.gz") == \
        "qastress data fetch ppdb --option packs=lexical"
    assert fetch_command("ppdb/ppdb-2.0-s-all") == fetch_command("ppdb/mine.txt") == \
        "qastress data fetch ppdb"
    assert fetch_command("squad/dev-v1.1.json") == "qastress data fetch squad"
    assert fetch_command("elsewhere/x.json") is None


def test_unknown_source_lists_known_ones(tmp_path):
    with pytest.raises(UnknownSource) as info:
        fetch_source("no-such-source", tmp_path)
    for name in ("entityquestions", "squad", "nq", "ppdb"):
        assert name in str(info.value)


def test_rebase_url():
    url = "https://dl.fbaipublicfiles.com/dpr/data/retriever/nq-test.qa.csv"
    assert rebase_url(url, "http://127.0.0.1:8000") == \
        "http://127.0.0.1:8000/dpr/data/retriever/nq-test.qa.csv"
    assert rebase_url(url, "http://mirror/pre/") == "http://mirror/pre/dpr/data/retriever/nq-test.qa.csv"
    assert rebase_url(url, None) == url


def test_registry_contents():
    listing = {entry["name"]: entry for entry in list_sources()}
    assert {"entityquestions", "squad", "paraphrasing-squad", "ppdb", "dpr-wikipedia", "nq",
            "trex", "quora", "wikianswers", "pyserini-dpr-nq"} <= set(listing)
    for entry in listing.values():
        dests = [f["dest"] for f in entry["files"]]
        assert len(dests) == len(set(dests)), entry["name"]
        for item in entry["files"]:
            assert re.match(r"https?://[^/]+/", item["url"]), item
            assert not Path(item["dest"]).is_absolute() and ".." not in Path(item["dest"]).parts
            assert item["sha256"] is None or re.fullmatch(r"[0-9a-f]{64}", item["sha256"])
            assert item["md5"] is None or re.fullmatch(r"[0-9a-f]{32}", item["md5"])
            assert item["extract"] is None or archive_kind(item["dest"]) is not None


def test_registry_matches_config_defaults():
    from tasks.config import SourcesConfig

    produced = set()
    for source in SOURCES.values():
        for remote in source.resolve_files():
            name = remote.dest[:-3] if remote.extract == "gz" else remote.dest
            produced.add(f"{source.dir}/{name}")
    config = SourcesConfig()
    for key in ("squad_train", "squad_dev", "passages", "nq_train", "nq_dev", "ppdb", "quora"):
        assert getattr(config, key) in produced, key


def test_ppdb_options():
    ppdb = get_source("ppdb")
    files = ppdb.resolve_files({"size": "xl", "packs": "lexical,phrasal"})
    assert [f.url for f in files] == [
        "http://nlpgrid.seas.upenn.edu/PPDB/eng/ppdb-2.0-xl-lexical.gz",
        "http://nlpgrid.seas.upenn.edu/PPDB/eng/ppdb-2.0-xl-phrasal.gz",
    ]
    with pytest.raises(ValueError, match="size"):
        ppdb.resolve_files({"size": "huge"})
    with pytest.raises(ValueError, match="no option"):
        ppdb.resolve_files({"colour": "red"})
