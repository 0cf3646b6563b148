"""The nesting guard in front of ijson: exact on any chunking (strings, escapes and backslash
runs across chunk edges), and the streamed reader names a too-deep record instead of letting
ijson's memory grow with the square of the depth."""

from __future__ import annotations

import io
import json
import random

import pytest

from tasks.io._jsondepth import MAX_DEPTH, DepthGuard, TooDeep
from tasks.io._jsonstream import iter_json_array
from tasks.io.errors import DataFormatError


def _max_depth(text: str) -> int:
    """The nesting depth of a JSON text, one character at a time (the reference)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _random_value(rng: random.Random, depth: int) -> object:
    kind = rng.random()
    if depth > 6 or kind < 0.4:
        # Strings full of the bytes the scan looks at: brackets, quotes, backslash runs.
        # (runs of 20 backslashes make the scan measure runs past its step-by-step limit)
        return "".join(rng.choice(['[', ']', '{', '}', '"', '\\', '\\\\', '\\' * 20, 'a', ' ',
                                   'é', '\n'])
                       for _ in range(rng.randrange(12)))
    if kind < 0.7:
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {_random_value(rng, 99): _random_value(rng, depth + 1) for _ in range(rng.randrange(4))}


def _guarded_depth(data: bytes, size: int, limit: int = 10_000) -> DepthGuard:
    guard = DepthGuard(io.BytesIO(data), limit)
    while guard.read(size):
        pass
    return guard


@pytest.mark.parametrize("seed", range(40))
def test_depth_is_exact_on_any_chunking(seed: int) -> None:
    rng = random.Random(seed)
    text = json.dumps([_random_value(rng, 0) for _ in range(5)], ensure_ascii=rng.random() < 0.5)
    data = text.encode()
    want = _max_depth(text)
    for size in (1, 2, 3, 5, 8, 64, len(data)):
        assert _guarded_depth(data, size, limit=want).depth == 0
        with pytest.raises(TooDeep):
            _guarded_depth(data, size, limit=want - 1)


@pytest.mark.parametrize("size", [1, 2, 3, 4, 7, 4096])
def test_backslash_runs_across_chunk_edges(size: int) -> None:
    # '\\\\"' ends the string (two escaped backslashes), '\\\\\\"' does not (an escaped quote).
    data = b'["\\\\\\\\", "\\\\\\"[[[", [[["\\\\\\\\\\\\\\"]]]"]]]]'
    assert _max_depth(data.decode()) == 4
    guard = _guarded_depth(data, size, limit=4)
    assert (guard.depth, guard.in_string, guard.backslashes) == (0, False, 0)
    with pytest.raises(TooDeep):
        _guarded_depth(data, size, limit=3)


@pytest.mark.parametrize("size", [1, 5, 4096])
def test_the_error_names_the_byte_and_cuts_the_chunk_there(size: int) -> None:
    data = b'[\n{"a": [1]},\n' + b"[" * 4 + b"\n" + b"]" * 4 + b"]"
    guard = DepthGuard(io.BytesIO(data), limit=4)
    passed = b""
    with pytest.raises(TooDeep) as info:
        while chunk := guard.read(size):
            passed += chunk
    assert info.value.position == data.index(b"[[[[") + 3 == len(passed)


def test_a_record_nested_too_deep_is_named_not_parsed(tmp_path) -> None:
    path = tmp_path / "retrieval.json"
    fine = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)  # MAX_DEPTH levels with the array
    path.write_text(f'\ufeff [{{"q": 1}},\n{fine},\n\n' + "[" * MAX_DEPTH + "]" * MAX_DEPTH
                    + "]", encoding="utf-8")
    items = iter_json_array(path, "a JSON array of retrieval results")
    assert next(items) == (0, {"q": 1})
    assert next(items)[0] == 1
    with pytest.raises(DataFormatError) as info:
        next(items)
    assert str(info.value) == (f"{path}, record 2, line 4: expected JSON nested at most "
                               f"{MAX_DEPTH} levels deep (a JSON array of retrieval results); "
                               f"got nested deeper than {MAX_DEPTH} levels")


def test_a_jsonl_line_nested_too_deep_is_named_or_skipped(tmp_path) -> None:
    from tasks.io._jsonstream import iter_jsonl
    from tasks.io.errors import SkipCounter

    path = tmp_path / "links.jsonl"
    path.write_text('{"a": 1}\n' + "[" * 100_000 + "]" * 100_000 + '\n{"b": 2}\n',
                    encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"links\.jsonl, line 2: expected one JSON value "
                                              r"per line; got JSON nested deeper than"):
        list(iter_jsonl(path))
    skips = SkipCounter("links")
    assert list(iter_jsonl(path, on_error="skip", skips=skips)) == [(1, {"a": 1}), (3, {"b": 2})]
    assert skips.total == 1
