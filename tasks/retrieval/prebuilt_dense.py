"""Dense indexes built elsewhere: Pyserini's prebuilt indexes, or any directory in their layout.

Encoding ``psgs_w100.tsv`` (21M passages) with DPR's context encoder takes GPU-days; Pyserini
publishes the result. ``wikipedia-dpr-100w.dpr-single-nq`` is a FAISS flat inner-product index
of those passages, encoded by the context encoder of DPR trained on NQ
(``facebook/dpr-ctx_encoder-single-nq-base``). Its ``docid`` file holds the ``id`` column of
``psgs_w100.tsv``. A dense retriever with ``prebuilt_index`` set searches such an index with
its own question encoder, instead of encoding the collection:

- :func:`resolve_prebuilt_dense_index` takes a directory as it is. A Pyserini name is handed to
  Pyserini's own ``download_prebuilt_index``, in the JVM worker. Pyserini downloads it into its
  cache (``$PYSERINI_CACHE`` or ``~/.cache/pyserini``) on first use, checks its md5 and unpacks
  it. Afterwards it finds it there, offline.
- :func:`adopt_dense_index` checks the directory. ``index`` must be a FAISS index that scores by
  inner product, as DPR does, with vectors of the question encoder's dimension
  (:func:`question_dim`, one encoded question, before any real one); ``docid`` must hold one
  non-empty, unique passage id per row. It
  then writes our index directory as a lone ``manifest.json`` whose ``source`` points at the
  files (:func:`tasks.retrieval.faiss_index.index_files`). The FAISS file is neither copied nor
  linked, so DVC caches the manifest, not 65 GB. The manifest declares the retriever's encoder
  as the index's model, because the user said so (``model_declared``); that is what lets its
  questions search it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from tasks.io.atomic import atomic_dir, write_json
from tasks.io.errors import DataFormatError, MissingInputError
from tasks.io.text import utf8_error
from tasks.orchestration import artifact_task
from tasks.retrieval.dense_shards import ModelMismatchError
from tasks.retrieval.encoder_spec import EncoderSpec
from tasks.retrieval.faiss_index import IDS_FILE, INDEX_FILE, MANIFEST_FILE, read_faiss_index

#: Pyserini's prebuilt dense indexes of ``psgs_w100.tsv`` (for messages; Pyserini knows more).
PYSERINI_DPR_INDEXES = ("wikipedia-dpr-100w.dpr-single-nq", "wikipedia-dpr-100w.dpr-multi")


def _pyserini_download(name: str, cache_home: str | None) -> tuple[str | None, list[str]]:
    """In the JVM worker: ``(local directory, [])`` of a Pyserini prebuilt dense index, or
    ``(None, known names)`` when Pyserini does not know ``name``."""
    from tasks.retrieval.jvm import start_jvm

    if cache_home:
        os.environ["PYSERINI_CACHE"] = cache_home
    else:
        os.environ.pop("PYSERINI_CACHE", None)
    start_jvm()
    from pyserini.prebuilt_index_info import FAISS_INDEX_INFO
    from pyserini.util import download_prebuilt_index

    if name not in FAISS_INDEX_INFO:
        return None, sorted(FAISS_INDEX_INFO)
    return str(download_prebuilt_index(name, verbose=False)), []


def resolve_prebuilt_dense_index(ref: str) -> tuple[Path, str | None]:
    """``(directory, Pyserini name or None)`` of a ``prebuilt_index`` setting.

    An existing directory is taken as it is. A name without a path separator is a Pyserini
    prebuilt dense index: Pyserini downloads it on first use (needs the internet once) and
    finds it in its cache afterwards. Anything else raises :class:`MissingInputError`.
    """
    path = Path(ref).expanduser()
    if path.is_dir():
        return path.resolve(), None
    if os.sep in ref or ref.startswith((".", "~")):
        raise MissingInputError(
            f"{ref}: no such directory (prebuilt_index: a directory holding a FAISS `{INDEX_FILE}` "
            f"and its `{IDS_FILE}` file, or a Pyserini prebuilt dense index name such as "
            f"{PYSERINI_DPR_INDEXES[0]})")
    from tasks.retrieval.jvm import in_jvm_process

    print(f"prebuilt dense index {ref!r}: asking Pyserini (it downloads it into its cache on "
          "first use: the DPR Wikipedia indexes are ~56 GB; `qastress data fetch "
          "pyserini-dpr-nq` fetches one with resume)")
    local, known = in_jvm_process(_pyserini_download, ref, os.environ.get("PYSERINI_CACHE"))
    if local is None:
        close = [name for name in known if name.split(".")[0] == ref.split(".")[0]]
        raise MissingInputError(
            f"{ref}: neither a directory nor a Pyserini prebuilt dense index; known "
            f"{'names like it' if close else 'names'}: {', '.join(close or known[:20])}")
    return Path(local), ref


def source_stamp(source: Path) -> dict:
    """Size and modification time of ``index`` and ``docid``: what the cache key of an
    adoption holds instead of hashing tens of gigabytes."""
    stamp = {}
    for name in (INDEX_FILE, IDS_FILE):
        path = Path(source) / name
        stat = path.stat() if path.is_file() else None
        stamp[name] = [stat.st_size, stat.st_mtime_ns] if stat else None
    return stamp


def _read_faiss_header(path: Path) -> Any:
    """The FAISS index at ``path`` (memory-mapped where FAISS can, so that checking a 65 GB
    flat index does not read it), or :class:`DataFormatError`."""
    try:
        return read_faiss_index(path)
    except RuntimeError as exc:
        first = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise DataFormatError(path, "start of file", "a FAISS index (faiss.write_index)",
                              first[:200]) from None


_BLANK_LINE = re.compile(r"^[ \t]+$", re.MULTILINE)


def _check_docids(path: Path, rows: int) -> str:
    """Check ``docid``: one passage id a line, one per index row, none empty, none repeated;
    return the sha256 of its bytes. The checks run in C; the lines are walked in Python only
    to name a bad one."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise utf8_error(path, exc) from None
    ids = text.splitlines()
    unique = set(ids)
    if len(unique) != len(ids) or "" in unique or _BLANK_LINE.search(text):
        seen: dict[str, int] = {}
        for lineno, pid in enumerate(ids, start=1):
            if not pid.strip():
                raise DataFormatError(path, f"line {lineno}", "one passage id per line",
                                      "an empty line")
            if pid in seen:
                raise DataFormatError(path, f"line {lineno}", "unique passage ids",
                                      f"{pid!r} again (first on line {seen[pid]})")
            seen[pid] = lineno
    if len(ids) != rows:
        raise DataFormatError(path, "whole file", f"one passage id per index row ({rows:,})",
                              f"{len(ids):,} ids")
    return hashlib.sha256(raw).hexdigest()


def question_dim(spec: EncoderSpec, device: str = "auto") -> int:
    """The dimension of ``spec``'s question vectors, from one encoded question (the encoder
    stays loaded for the process's later searches: :func:`tasks.retrieval.encoders.load_encoder`
    keeps it)."""
    from tasks.retrieval.encoders import encode_questions

    return int(encode_questions(spec, ["dimension probe"], ["probe"], device=device)
               .vectors.shape[1])


def adopt_dense_index(source: str, index_dir: Path, spec: EncoderSpec, stamp: dict,
                      prebuilt: str | None = None, dim: int | None = None) -> Path:
    """Check the dense index in ``source`` and write ``index_dir`` as a manifest pointing at it,
    declaring ``spec`` as the encoder of its passages (``stamp``: :func:`source_stamp`, for the
    cache key; ``prebuilt``: the Pyserini name it came from, for the record; ``dim``: the
    dimension of ``spec``'s question vectors, :func:`question_dim`, None: not checked here).

    Raises :class:`DataFormatError` for a missing or malformed file, an index that does not
    score by inner product or ids that do not match its rows, and
    :class:`ModelMismatchError` when the question vectors have another dimension than the
    index's, or ``source`` is one of our own indexes built with another encoder.
    """
    import faiss

    root = Path(source)
    for name in (INDEX_FILE, IDS_FILE):
        if not (root / name).is_file():
            raise DataFormatError(root / name, "file", f"a dense index in Pyserini's layout "
                                  f"({INDEX_FILE}: the FAISS index, {IDS_FILE}: its passage ids)",
                                  "no such file")
    index = _read_faiss_header(root / INDEX_FILE)
    if index.metric_type != faiss.METRIC_INNER_PRODUCT:
        raise DataFormatError(root / INDEX_FILE, "metric", "an inner-product index (DPR scores "
                              "passages by dot product)", f"metric type {index.metric_type} "
                              f"({type(index).__name__})")
    if dim is not None and dim != index.d:
        raise ModelMismatchError(
            f"{root / INDEX_FILE} holds {index.d}-dim vectors, but the question encoder "
            f"{spec.describe()} gives {dim}-dim ones: a prebuilt index is searched with the "
            "question encoder its passages were encoded for (retrieval.dense.model)")
    ids_sha256 = _check_docids(root / IDS_FILE, index.ntotal)
    own = root / MANIFEST_FILE
    if own.is_file():
        recorded = json.loads(own.read_text(encoding="utf-8")).get("model_fingerprint")
        if recorded and recorded != spec.fingerprint:
            raise ModelMismatchError(
                f"{root} was built with an encoder of fingerprint {recorded[:12]}, but the "
                f"retriever's encoder is {spec.describe()}: its questions cannot search it")
    manifest = {
        "kind": "faiss-dense",
        "index_kind": "prebuilt",
        "faiss_class": type(index).__name__,
        "metric": "inner_product",
        "model": spec.name,
        "model_fingerprint": spec.fingerprint,
        "model_declared": True,
        "dim": int(index.d),
        "rows": int(index.ntotal),
        "source": str(root.resolve()),
        "prebuilt": prebuilt,
        "params": {},
        "faiss": faiss.__version__,
    }
    manifest["fingerprint"] = hashlib.sha256(json.dumps({
        "source": manifest["source"], "stamp": stamp, "model": spec.fingerprint,
        "ids": ids_sha256},
        sort_keys=True).encode()).hexdigest()
    with atomic_dir(index_dir) as tmp:
        write_json(tmp / MANIFEST_FILE, manifest, indent=2)
    return Path(index_dir)


adopt_dense_index_task = artifact_task(adopt_dense_index, outputs=("index_dir",),
                                       name="adopt prebuilt dense index")
#: Cached on the encoder's fingerprint: a rerun loads no model to learn the dimension.
question_dim_task = artifact_task(question_dim, name="question vector dimension")
