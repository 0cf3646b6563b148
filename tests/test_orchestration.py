"""Caching keyed on file content, invalidated when an output disappears."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from prefect import flow

from tasks.orchestration import (
    TRANSIENT,
    artifact_task,
    path_fingerprint,
    run_settings,
    stable_value,
)

CALLS: list[str] = []


def copy_upper(source: Path, target: Path) -> str:
    """Upper-case ``source`` into ``target`` (a stand-in for a pipeline step)."""
    CALLS.append(source.read_text())
    target.write_text(source.read_text().upper())
    return target.read_text()


copy_upper_task = artifact_task(copy_upper, outputs=("target",))


@flow
def tiny_flow(source: Path, target: Path) -> str:
    return copy_upper_task(source, target)


@pytest.fixture
def state(tmp_path, prefect_api):
    with run_settings(tmp_path / "state"):
        yield


def first_run(tmp_path: Path, text: str) -> tuple[Path, Path]:
    """``tiny_flow`` run once on a new input holding ``text``: (input, output)."""
    source, target = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text(text)
    CALLS.clear()
    tiny_flow(source, target)
    return source, target


def test_second_run_is_served_from_cache(tmp_path, state):
    source, target = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("abc")
    CALLS.clear()
    assert tiny_flow(source, target) == "ABC"
    assert tiny_flow(source, target) == "ABC"
    assert CALLS == ["abc"]


def test_changed_file_content_invalidates_cache(tmp_path, state):
    source, target = first_run(tmp_path, "abc")
    source.write_text("xyz")  # same path, new content: Prefect's INPUTS policy would hit
    assert tiny_flow(source, target) == "XYZ"
    assert CALLS == ["abc", "xyz"]


@pytest.mark.parametrize("damage", ["deleted", "truncated"])
def test_missing_or_truncated_output_recomputes(tmp_path, state, damage):
    """An output that is gone, or no longer has the size the run wrote (a half-written copy,
    an edit), is not served from cache."""
    source, target = first_run(tmp_path, "abc")
    if damage == "deleted":
        target.unlink()
    else:
        target.write_text("AB")
    assert tiny_flow(source, target) == "ABC"
    assert target.read_text() == "ABC"
    assert CALLS == ["abc", "abc"]


def mark_copy(source: Path, target: Path, mark: str) -> str:
    """``source`` + ``mark`` into ``target``: two marks, two cache keys, one output path."""
    CALLS.append(mark)
    target.write_text(source.read_text() + mark)
    return target.read_text()


mark_copy_task = artifact_task(mark_copy, outputs=("target",))


@flow
def mark_flow(source: Path, target: Path, mark: str) -> str:
    return mark_copy_task(source, target, mark)


def test_output_rewritten_by_another_parameterisation_recomputes(tmp_path, state):
    """A, B, A over one output path: the third run's record exists but the file holds B's
    output, so A runs again (a seed sweep, or ``dvc exp run -S`` flipping a value back)."""
    source, target = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("x")
    CALLS.clear()
    assert mark_flow(source, target, "A") == "xA"
    assert mark_flow(source, target, "B") == "xB"
    assert mark_flow(source, target, "A") == "xA" and target.read_text() == "xA"
    assert mark_flow(source, target, "A") == "xA"  # its own output again: served from cache
    assert CALLS == ["A", "B", "A"]


def write_set(shared_dir: Path, own_dir: Path, name: str) -> str:
    """One set's files into its own directory and into a directory sets share."""
    CALLS.append(name)
    for folder in (shared_dir, own_dir):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.txt").write_text(name)
    return name


write_set_task = artifact_task(write_set, outputs=("shared_dir", "own_dir"))


@flow
def two_sets_flow(root: Path) -> list[str]:
    return [write_set_task(root / "sets", root / name, name) for name in ("dev", "adv")]


def test_calls_sharing_one_output_directory_stay_cached(tmp_path, state):
    """Outputs are stamped as a combination: the dev and the adversarial set both write into
    the shared directory, with different own outputs, and do not invalidate each other."""
    CALLS.clear()
    assert two_sets_flow(tmp_path) == ["dev", "adv"]
    assert two_sets_flow(tmp_path) == ["dev", "adv"]
    assert CALLS == ["dev", "adv"]


def write_part(shared_dir: Path, name: str) -> str:
    """One named part into a directory that several calls share (as the test sets do)."""
    CALLS.append(name)
    shared_dir.mkdir(parents=True, exist_ok=True)
    (shared_dir / f"{name}.txt").write_text(name)
    return name


write_part_task = artifact_task(write_part, outputs=("shared_dir",), parts=("name",))
write_part_unnamed_task = artifact_task(write_part, outputs=("shared_dir",))


@flow
def parts_flow(root: Path, named: bool) -> list[str]:
    task = write_part_task if named else write_part_unnamed_task
    return [task(root / "sets", name) for name in ("dev", "adv")]


def test_declared_parts_of_a_shared_output_stay_cached(tmp_path, state):
    """Calls that write named parts of one directory: with ``parts`` both stay cached; without,
    each call's record is taken for overwritten by the other and both run again."""
    CALLS.clear()
    parts_flow(tmp_path / "named", True)
    parts_flow(tmp_path / "named", True)
    assert CALLS == ["dev", "adv"]
    CALLS.clear()
    parts_flow(tmp_path / "unnamed", False)
    parts_flow(tmp_path / "unnamed", False)
    assert CALLS == ["dev", "adv", "dev", "adv"]


def test_a_part_whose_files_were_deleted_recomputes(tmp_path, state):
    """The directory that calls share is deleted and rewritten by the first call: the second
    call's own files are gone although the directory exists, so it runs again (before the
    stamps listed the files, its record was served and the file stayed missing)."""
    CALLS.clear()
    parts_flow(tmp_path, True)
    shutil.rmtree(tmp_path / "sets")
    parts_flow(tmp_path, True)
    assert CALLS == ["dev", "adv", "dev", "adv"]
    assert (tmp_path / "sets" / "adv.txt").read_text() == "adv"
    CALLS.clear()
    (tmp_path / "sets" / "adv.txt").unlink()  # one part's file alone
    parts_flow(tmp_path, True)
    assert CALLS == ["adv"]


def test_a_stamp_without_a_file_list_is_still_read(tmp_path, state):
    """Stamps of before the file lists hold the key alone and keep serving their records."""
    source, target = first_run(tmp_path, "hello")
    stamps = list((tmp_path / "state" / "results" / ".output-stamps").iterdir())
    assert len(stamps) == 1
    recorded = json.loads(stamps[0].read_text())
    assert list(recorded["files"]) == [str(target.resolve())]
    stamps[0].write_text(recorded["key"])
    tiny_flow(source, target)
    assert CALLS == ["hello"]


def test_stable_value_fingerprints_paths_and_models(tmp_path):
    from tasks.config import BM25Config

    f = tmp_path / "a.txt"
    f.write_text("one")
    first = stable_value({"p": f, "cfg": BM25Config()})
    f.write_text("two")
    second = stable_value({"p": f, "cfg": BM25Config()})
    assert first["cfg"] == second["cfg"] == BM25Config().model_dump(mode="json")
    assert first["p"]["sha256"] != second["p"]["sha256"]
    assert path_fingerprint(tmp_path / "nope") == "<missing>"


def test_tasks_that_start_the_jvm_are_retried():
    """Lucene tasks (JVM start) carry the transient retries; plain steps do not."""
    from tasks.questions.dpr_training import dpr_training_task
    from tasks.retrieval.bm25 import build_bm25_index_task
    from tasks.retrieval.bm25_batches import search_bm25_batch_task
    from tasks.retrieval.relation_results import evaluate_run_task

    # every query set (test split, buckets, paraphrased) is searched by search_bm25_batch_task
    for lucene_task in (build_bm25_index_task, search_bm25_batch_task, dpr_training_task):
        assert lucene_task.retries == TRANSIENT["retries"] >= 1, lucene_task.name
        assert lucene_task.retry_delay_seconds == TRANSIENT["retry_delay_seconds"]
    assert evaluate_run_task.retries == 0


def flaky_copy(source: Path, target: Path) -> str:
    """Fails on its first call (a JVM that did not start), then copies."""
    CALLS.append("call")
    if len(CALLS) == 1:
        raise OSError("transient: JVM did not start")
    target.write_text(source.read_text())
    return target.read_text()


flaky_copy_task = artifact_task(flaky_copy, outputs=("target",),
                                **{**TRANSIENT, "retry_delay_seconds": 0})


@flow
def flaky_flow(source: Path, target: Path) -> str:
    return flaky_copy_task(source, target)


def test_transient_failure_is_retried_and_the_flow_completes(tmp_path, state):
    source, target = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("abc")
    CALLS.clear()
    assert flaky_flow(source, target) == "abc"
    assert CALLS == ["call", "call"]


HELPER_V1 = "def shout(text):\n    return text.upper()\n"
HELPER_V2 = "def shout(text):\n    return text.upper() + '!'\n"  # a fix in a helper


def shout_file(source: Path) -> str:
    """A task body that calls a helper from another module (``qastress_helper``)."""
    import qastress_helper

    CALLS.append("shout")
    return qastress_helper.shout(source.read_text())


shout_task = artifact_task(shout_file)


@flow
def shout_flow(source: Path):
    return shout_task(source, return_state=True)


def test_changed_helper_reruns_the_task_and_unchanged_code_is_cached(tmp_path, state,
                                                                      monkeypatch):
    import importlib
    import sys

    from tasks.orchestration import _code_fingerprint, code_fingerprint, code_roots

    package = tmp_path / "src" / "qastress_helper"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(HELPER_V1)
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    source = tmp_path / "in.txt"
    source.write_text("abc")
    CALLS.clear()
    with code_roots(package):
        first = code_fingerprint()
        assert shout_flow(source).result() == "ABC"
        again = shout_flow(source)
        assert (again.name, again.result(), CALLS) == ("Cached", "ABC", ["shout"])

        (package / "__init__.py").write_text(HELPER_V2)  # as a new process would see it:
        importlib.reload(sys.modules["qastress_helper"])
        _code_fingerprint.cache_clear()
        assert code_fingerprint() != first
        fixed = shout_flow(source)
        assert (fixed.name, fixed.result(), CALLS) == ("Completed", "ABC!", ["shout", "shout"])
        (package / "data.json").write_text("{}")  # package data count too
        _code_fingerprint.cache_clear()
        assert shout_flow(source).name == "Completed" and len(CALLS) == 3
    sys.modules.pop("qastress_helper", None)


def test_code_fingerprint_covers_the_source_tree_and_library_versions(tmp_path):
    from tasks.orchestration import code_fingerprint, code_roots, library_versions

    versions = library_versions()
    assert set(versions) == {"torch", "transformers", "pyserini", "faiss", "flair"}
    assert versions["torch"].startswith("torch==")
    assert library_versions({"nope": ("no-such-distribution",)}) == {"nope": "absent"}
    own = code_fingerprint()
    assert code_fingerprint() == own  # memoised: once per process
    (tmp_path / "a.py").write_text("x = 1\n")
    with code_roots(tmp_path):
        assert code_fingerprint() != own
    assert code_fingerprint() == own
