"""Pyserini ``JsonCollection``: passages as JSON lines ``{"id", "contents"}`` for indexing.

``contents`` layouts (the ``contents`` argument of :func:`write_json_collection`):

``"title_text"`` (default)
    ``title + "\\n" + text``: the layout of Pyserini's prebuilt ``wikipedia-dpr`` index, whose
    ``contents`` is the title line then the passage text (Pyserini's ``scripts/dpr`` split it
    back with ``contents.split("\\n")``). We store the decoded TSV fields, without the extra
    quotes some copies of ``psgs_w100.tsv`` carry.
``"title_space_text"``
    ``title + " " + text``: what EntityQuestions' own ``bm25/build_bm25_ctx_passages.py``
    indexes (their retriever then cuts ``len(title)`` characters off the raw contents).
``"text"``
    The passage text only.

For BM25 the first two are the same (Lucene's analyzer treats the newline as white space);
``"title_text"`` is preferred because title and text can be recovered from it exactly.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tasks.io._jsonstream import dumps, iter_jsonl
from tasks.io.atomic import atomic_dir, atomic_write
from tasks.io.errors import DataFormatError, SkipCounter, handle, preview
from tasks.io.passages import Passage

ContentsLayout = Literal["title_text", "title_space_text", "text"]
CONTENTS_LAYOUTS: tuple[str, ...] = ("title_text", "title_space_text", "text")
_SUFFIXES = (".json", ".jsonl")


@dataclass(frozen=True, slots=True)
class CollectionDoc:
    """One document of a JsonCollection."""

    id: str
    contents: str


def passage_contents(passage: Passage, contents: ContentsLayout = "title_text") -> str:
    """The ``contents`` string of ``passage`` under the given layout."""
    if contents == "title_text":
        return f"{passage.title}\n{passage.text}"
    if contents == "title_space_text":
        return f"{passage.title} {passage.text}"
    if contents == "text":
        return passage.text
    raise ValueError(f"contents must be one of {CONTENTS_LAYOUTS}, not {contents!r}")


def write_json_collection(directory: str | Path, passages: Iterable[Passage],
                          contents: ContentsLayout = "title_text",
                          shard_size: int = 1_000_000) -> list[Path]:
    """Write ``passages`` as a Pyserini JsonCollection; return the shard files in order.

    Shards are ``docs00000.jsonl``, ``docs00001.jsonl``, ... of at most ``shard_size``
    documents each. The directory is built under a temporary name and then replaces
    ``directory`` as a whole, so stale shards of an earlier, larger collection never remain.
    """
    if contents not in CONTENTS_LAYOUTS:
        raise ValueError(f"contents must be one of {CONTENTS_LAYOUTS}, not {contents!r}")
    if shard_size < 1:
        raise ValueError(f"shard_size must be positive, not {shard_size}")
    directory = Path(directory)
    names: list[str] = []
    with atomic_dir(directory) as tmp:
        iterator = iter(passages)
        exhausted = False
        while not exhausted:
            name = f"docs{len(names):05d}.jsonl"
            written = 0
            with atomic_write(tmp / name, newline="\n") as out:
                for passage in iterator:
                    out.write(dumps({"id": str(passage.id),
                                     "contents": passage_contents(passage, contents)}) + "\n")
                    written += 1
                    if written == shard_size:
                        break
                else:
                    exhausted = True
            if written:
                names.append(name)
            else:
                (tmp / name).unlink()
    return [directory / name for name in names]


def _collection_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise FileNotFoundError(f"no JsonCollection file or directory at {path}")
    return sorted(p for p in path.iterdir()
                  if p.is_file() and p.suffix in _SUFFIXES and not p.name.startswith("."))


def iter_json_collection(directory: str | Path, on_error: str = "raise",
                         skips: SkipCounter | None = None) -> Iterator[CollectionDoc]:
    """Stream the documents of a JsonCollection directory (``*.json``/``*.jsonl``, name order).

    ``directory`` may also be one file. A line that is not an object with string ``id`` and
    ``contents`` raises :class:`DataFormatError` naming file and line, or with
    ``on_error="skip"`` is counted in ``skips``. Extra fields are ignored.
    """
    for path in _collection_files(Path(directory)):
        for lineno, value in iter_jsonl(path, on_error, skips):
            if not isinstance(value, dict):
                handle(DataFormatError(path, f"line {lineno}", 'an object {"id", "contents"}',
                                       preview(value)), on_error, skips)
                continue
            doc_id, text = value.get("id"), value.get("contents")
            if isinstance(doc_id, int) and not isinstance(doc_id, bool):
                doc_id = str(doc_id)
            if not isinstance(doc_id, str) or not doc_id:
                handle(DataFormatError(path, f"line {lineno}", 'a non-empty string "id"',
                                       preview(doc_id)), on_error, skips)
                continue
            if not isinstance(text, str):
                handle(DataFormatError(path, f"line {lineno}", 'a string "contents"',
                                       preview(text)), on_error, skips)
                continue
            yield CollectionDoc(doc_id, text)
