"""SQuAD v1.1 files (and the paraphrased test sets of Gan & Ng, 2019); prediction files are
:mod:`tasks.io.squad_predictions`.

``{version, data: [{title, paragraphs: [{context, qas: [{id, question, answers: [{text,
answer_start}]}]}]}]}``. :func:`read_squad` keeps the parsed JSON itself (validated) and exposes
typed views of it, so that read -> :func:`write_squad` gives back the same JSON content with the
same key order per object and any extra keys a file carries (the paraphrased sets put ``qas``
before ``context``, the official ones after). A key repeated in a JSON object of a SQuAD or a
predictions file (a question id given twice) is an error naming the object, not resolved
silently to the last value.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks.io.atomic import write_json
from tasks.io.errors import TOO_DEEP, DataFormatError, SkipCounter, handle, preview
from tasks.io.text import utf8_error

_ARTICLE_KEYS = "an object with keys 'title' (string) and 'paragraphs' (list)"
_PARAGRAPH_KEYS = "an object with keys 'context' (string) and 'qas' (list)"
_QA_KEYS = "an object with keys 'id' (string), 'question' (string) and 'answers' (list)"
_ANSWER_KEYS = "an object with keys 'text' (string) and 'answer_start' (integer)"


@dataclass(frozen=True, slots=True)
class SquadAnswer:
    """One gold answer: its text and its character offset in the paragraph's context."""

    text: str
    answer_start: int


@dataclass(frozen=True, slots=True)
class SquadQuestion:
    """A question with its gold answers, its paragraph's context and its article's title."""

    id: str
    question: str
    answers: tuple[SquadAnswer, ...]
    context: str
    title: str


@dataclass(frozen=True, slots=True)
class SquadDataset:
    """A validated SQuAD file: ``raw`` is the JSON content itself, the methods are views of it."""

    raw: dict[str, Any]
    path: str | None = None

    @property
    def version(self) -> str:
        """The file's ``version`` string."""
        return self.raw["version"]

    def questions(self) -> Iterator[SquadQuestion]:
        """The questions in file order."""
        for article in self.raw["data"]:
            title = article["title"]
            for paragraph in article["paragraphs"]:
                context = paragraph["context"]
                for qa in paragraph["qas"]:
                    answers = tuple(SquadAnswer(a["text"], a["answer_start"])
                                    for a in qa["answers"])
                    yield SquadQuestion(qa["id"], qa["question"], answers, context, title)

    def __len__(self) -> int:
        return sum(len(paragraph["qas"]) for article in self.raw["data"]
                   for paragraph in article["paragraphs"])

    def by_id(self) -> dict[str, SquadQuestion]:
        """The questions keyed by id (ids are unique in a validated file)."""
        return {question.id: question for question in self.questions()}


class _RepeatedKeys(dict):
    """A parsed JSON object that had a key more than once (``repeated``: key -> count)."""

    __slots__ = ("repeated",)


def _find_repeated(value: Any) -> tuple[str, _RepeatedKeys] | None:
    """The record path (``data[0].paragraphs[2]``, ``top level``) of the first object in
    document order that had a repeated key, and the object (walked only when there is one)."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, _RepeatedKeys):
            return where or "top level", item
        if isinstance(item, dict):
            children = [(f"{where}.{key}" if where else str(key), child)
                        for key, child in item.items()]
        elif isinstance(item, list):
            children = [(f"{where}[{i}]", child) for i, child in enumerate(item)]
        else:
            continue
        stack.extend(reversed(children))
    return None


def load_strict_json(path: str | Path, top_level_keys: str | None = None) -> Any:
    """Parse a whole JSON file (UTF-8, BOM allowed). A key repeated in an object (which
    :mod:`json` resolves silently to the last value) is an error naming the object's record
    path and the keys (``top_level_keys``, e.g. "question id", names what the keys of the
    top-level object are)."""
    try:
        text = Path(path).read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise utf8_error(path, exc) from None
    repeated = False

    def object_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal repeated
        obj = dict(pairs)
        if len(obj) == len(pairs):  # the common case: one len() per object
            return obj
        repeated = True
        marked = _RepeatedKeys(obj)
        counts: dict[str, int] = {}
        for key, _ in pairs:
            counts[key] = counts.get(key, 0) + 1
        marked.repeated = {key: n for key, n in counts.items() if n > 1}
        return marked

    try:
        value = json.loads(text, object_pairs_hook=object_pairs)
    except json.JSONDecodeError as exc:
        got = "an empty file" if not text.strip() else exc.msg
        raise DataFormatError(path, f"line {exc.lineno}, column {exc.colno}", "valid JSON",
                              got) from None
    except RecursionError:
        raise DataFormatError(path, "top level", "SQuAD JSON (a few levels of nesting)",
                              TOO_DEEP) from None
    found = _find_repeated(value) if repeated else None
    if found is not None:
        where, obj = found
        expected = (f"each {top_level_keys} once" if where == "top level" and top_level_keys
                    else "each key once in a JSON object")
        raise DataFormatError(path, where, expected, ", ".join(
            f"{preview(key)} {n} times" for key, n in obj.repeated.items()))
    return value


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_qa(qa: Any, context: str, path: str, where: str) -> str:
    """Validate one ``qas`` item; return its id."""
    if not isinstance(qa, dict):
        raise DataFormatError(path, where, _QA_KEYS, f"a {type(qa).__name__}")
    qid = qa.get("id")
    if not isinstance(qid, str):
        got = "no 'id'" if "id" not in qa else f"id {preview(qid)}"
        raise DataFormatError(path, where, _QA_KEYS, got)
    if not qid:
        raise DataFormatError(path, where, "a non-empty 'id'", "''")
    where = f"{where} (question id {qid!r})"
    for key, kind in (("question", str), ("answers", list)):
        if key not in qa:
            raise DataFormatError(path, where, _QA_KEYS, f"no {key!r}")
        if not isinstance(qa[key], kind):
            raise DataFormatError(path, where, _QA_KEYS,
                                  f"{key!r} of type {type(qa[key]).__name__}")
    if not qa["question"]:
        raise DataFormatError(path, where, "a non-empty 'question'", "''")
    for a, answer in enumerate(qa["answers"]):
        if not isinstance(answer, dict):
            raise DataFormatError(path, f"{where}, answers[{a}]", _ANSWER_KEYS,
                                  f"a {type(answer).__name__}")
        for key in ("text", "answer_start"):
            if key not in answer:
                raise DataFormatError(path, f"{where}, answers[{a}]", _ANSWER_KEYS,
                                      f"no {key!r}")
        text, start = answer["text"], answer["answer_start"]
        if not isinstance(text, str):
            raise DataFormatError(path, f"{where}, answers[{a}]", "a string 'text'",
                                  preview(text))
        if not text:
            raise DataFormatError(path, f"{where}, answers[{a}]", "a non-empty answer 'text'",
                                  "''")
        if not _is_int(start):
            raise DataFormatError(path, f"{where}, answers[{a}]",
                                  "an integer 'answer_start'", preview(start))
        end = start + len(text)
        span = context[start:end] if start >= 0 else None
        if span != text:
            found = context.find(text)
            hint = f"; the text occurs at {found}" if found >= 0 else "; the text is not in it"
            got = (f"context[{start}:{end}] = {preview(span)}" if span is not None
                   else "a negative offset")
            raise DataFormatError(path, f"{where}, answers[{a}]",
                                  f"answer_start {start} to point at the answer text "
                                  f"{preview(text)} in the context", got + hint)
    return qid


def _holding(error: DataFormatError, record: Any) -> DataFormatError:
    """``error`` of a bad article or paragraph, its place followed by how many questions the
    record's shape shows (``data[3] (holding 5 questions)``): what skipping it leaves out."""
    def count(obj: Any) -> int:
        if not isinstance(obj, dict):
            return 0
        if isinstance(obj.get("qas"), list):
            return len(obj["qas"])
        paragraphs = obj.get("paragraphs")
        return sum(map(count, paragraphs)) if isinstance(paragraphs, list) else 0

    n = count(record)
    if not n:
        return error
    where = f"{error.where} (holding {n} question{'' if n == 1 else 's'})"
    held = DataFormatError(error.path, where, error.expected, error.got)
    held.__suppress_context__ = True  # raised in place of ``error``: one message, not two
    return held


def validate_squad(raw: Any, path: str | Path = "<squad>", on_error: str = "raise",
                   skips: SkipCounter | None = None) -> dict[str, Any]:
    """Check the SQuAD v1.1 shape of ``raw``; return it.

    Problems of the file as a whole (not an object, ``version`` not a string, ``data`` not a
    list) always raise. A bad article, paragraph or question raises :class:`DataFormatError`
    naming its record path (``data[3].paragraphs[0].qas[2]``) and question id, or with
    ``on_error="skip"`` is counted in ``skips`` and removed from ``raw`` (in place; the other
    objects and their key order are left as they are). A bad article or paragraph counts as one
    record; its message says how many questions it holds, which are left out with it. Ids,
    questions and answer texts must be non-empty strings. A repeated question id is an error of
    the later question.
    """
    path = str(path)
    if not isinstance(raw, dict):
        raise DataFormatError(path, "top level", "an object with keys 'version' and 'data'",
                              f"a {type(raw).__name__}")
    if "version" not in raw or not isinstance(raw["version"], str):
        got = "no 'version'" if "version" not in raw else preview(raw["version"])
        raise DataFormatError(path, "top level", "a string 'version'", got)
    if not isinstance(raw.get("data"), list):
        got = "no 'data'" if "data" not in raw else f"a {type(raw['data']).__name__}"
        raise DataFormatError(path, "top level", "a list 'data'", got)
    seen: dict[str, str] = {}
    articles = []
    for i, article in enumerate(raw["data"]):
        where = f"data[{i}]"
        try:
            if not isinstance(article, dict):
                raise DataFormatError(path, where, _ARTICLE_KEYS, f"a {type(article).__name__}")
            for key, kind in (("title", str), ("paragraphs", list)):
                if key not in article:
                    raise DataFormatError(path, where, _ARTICLE_KEYS, f"no {key!r}")
                if not isinstance(article[key], kind):
                    raise DataFormatError(path, where, _ARTICLE_KEYS,
                                          f"{key!r} of type {type(article[key]).__name__}")
        except DataFormatError as error:
            handle(_holding(error, article), on_error, skips)
            continue
        paragraphs = []
        for j, paragraph in enumerate(article["paragraphs"]):
            where = f"data[{i}].paragraphs[{j}]"
            try:
                if not isinstance(paragraph, dict):
                    raise DataFormatError(path, where, _PARAGRAPH_KEYS,
                                          f"a {type(paragraph).__name__}")
                for key, kind in (("context", str), ("qas", list)):
                    if key not in paragraph:
                        raise DataFormatError(path, where, _PARAGRAPH_KEYS, f"no {key!r}")
                    if not isinstance(paragraph[key], kind):
                        raise DataFormatError(path, where, _PARAGRAPH_KEYS,
                                              f"{key!r} of type {type(paragraph[key]).__name__}")
            except DataFormatError as error:
                handle(_holding(error, paragraph), on_error, skips)
                continue
            qas = []
            for k, qa in enumerate(paragraph["qas"]):
                where = f"data[{i}].paragraphs[{j}].qas[{k}]"
                try:
                    qid = _check_qa(qa, paragraph["context"], path, where)
                    if qid in seen:
                        raise DataFormatError(path, f"{where} (question id {qid!r})",
                                              "unique question ids",
                                              f"{qid!r} already at {seen[qid]}")
                except DataFormatError as error:
                    handle(error, on_error, skips)
                    continue
                seen[qid] = where
                qas.append(qa)
            if len(qas) != len(paragraph["qas"]):
                paragraph["qas"] = qas
            paragraphs.append(paragraph)
        if len(paragraphs) != len(article["paragraphs"]):
            article["paragraphs"] = paragraphs
        articles.append(article)
    if len(articles) != len(raw["data"]):
        raw["data"] = articles
    return raw


def read_squad(path: str | Path, on_error: str = "raise",
               skips: SkipCounter | None = None) -> SquadDataset:
    """Read and validate a SQuAD v1.1 file (see :func:`validate_squad` for the errors)."""
    raw = validate_squad(load_strict_json(path), path, on_error, skips)
    return SquadDataset(raw, str(path))


def write_squad(path: str | Path, dataset_or_raw: SquadDataset | Mapping[str, Any]) -> Path:
    """Validate and atomically write a SQuAD file (UTF-8, non-ASCII kept, key order kept)."""
    raw = dataset_or_raw.raw if isinstance(dataset_or_raw, SquadDataset) else dataset_or_raw
    if not isinstance(raw, dict):
        raw = dict(raw)
    validate_squad(raw, path)
    return write_json(path, raw)


AnswerSpec = SquadAnswer | tuple[str, int | None]


def build_squad(
    version: str,
    articles: Iterable[tuple[str, Iterable[tuple[str, Iterable[tuple[str, str,
                                                                      list[AnswerSpec]]]]]]],
) -> dict[str, Any]:
    """Build the JSON content of a new SQuAD file, laid out like the official v1.1 files.

    ``articles`` is ``[(title, [(context, [(id, question, [(text, start), ...]), ...]), ...])]``.
    An answer may also be a :class:`SquadAnswer`; a ``start`` of ``None`` means the first
    occurrence of the text in the context. The result is validated (bad spans, repeated ids).
    """
    data = []
    for title, paragraphs in articles:
        built_paragraphs = []
        for context, qas in paragraphs:
            built_qas = []
            for qid, question, answers in qas:
                built_answers = []
                for answer in answers:
                    if isinstance(answer, SquadAnswer):
                        text, start = answer.text, answer.answer_start
                    else:
                        text, start = answer
                    if start is None:
                        start = context.find(text)
                        if start < 0:
                            raise DataFormatError("<build_squad>", f"question id {qid!r}",
                                                  "an answer text found in the context",
                                                  preview(text))
                    built_answers.append({"answer_start": start, "text": text})
                built_qas.append({"answers": built_answers, "question": question, "id": qid})
            built_paragraphs.append({"context": context, "qas": built_qas})
        data.append({"title": title, "paragraphs": built_paragraphs})
    return validate_squad({"data": data, "version": version}, "<build_squad>")


def discover_paraphrase_sets(sets_dir: str | Path | None,
                             prefix: str = "") -> dict[str, tuple[Path, Path]]:
    """``{prefix + set: (orig, para)}`` for every ``<set>_orig.json`` of a paraphrased-set
    directory (Gan & Ng's release layout) with a ``<set>_para.json`` beside it, where both hold
    at least one question (sorted by set name; ``{}`` when the directory is absent or None)."""
    found: dict[str, tuple[Path, Path]] = {}
    if sets_dir is None or not Path(sets_dir).is_dir():
        return found
    for orig in sorted(Path(sets_dir).glob("*_orig.json")):
        name = orig.name[: -len("_orig.json")]
        para = orig.with_name(f"{name}_para.json")
        if para.is_file() and len(read_squad(orig)) and len(read_squad(para)):
            found[prefix + name] = (orig, para)
    return found

