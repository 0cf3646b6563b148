"""Prefect plumbing shared by every flow: file-aware caching, result storage, task wrappers.

Prefect's default ``INPUTS`` policy hashes a file argument by its *path*, so a task would be
served from cache after the file changed. :class:`FileFingerprintPolicy` hashes the task's
source and its inputs with every :class:`~pathlib.Path` replaced by the sha256 of its content
(directories that carry a ``manifest.json`` with a ``fingerprint`` use that). Parameters that
name a task's *outputs* are hashed by path only; when one of them no longer exists the cached
record is dropped so the task runs again instead of returning a stale reference.

Several parameterisations of a task may write the same output path (a reader re-trained with
another seed, ``dvc exp run -S`` flipping a parameter back): after A, B, A the third run's key
has a record, but the file holds B's output. So every run of an :func:`artifact_task` stamps
its combination of output paths with its cache key when it finishes (``<result
storage>/.output-stamps/``, one small file per combination), and a record is only served when
its outputs carry the key's own stamp; otherwise it is dropped and the task runs again. Calls
that write different parts of one shared directory tell their stamps apart by their other
outputs or by the parameters declared as ``parts`` (``artifact_task(..., parts=("name",))``).

A stamp also lists the files the run wrote under its output paths (new or changed during the
call) with their sizes, and a record is served only while each of them is still there at
that size: a call that wrote its part of a shared directory is recomputed when its own files
were deleted, although the directory exists again (rewritten by another call); a truncated file
is noticed too. (An output edited by hand to the same size is not noticed.)

The key also holds :func:`code_fingerprint`: the content of every file of the qastress source
tree (``flows/``, ``tasks/``, ``models/``, package data included) and the versions of the
libraries that compute results, so a fix in a helper a task calls, or a new torch, reruns the
task instead of serving numbers of the old code. It is computed once per process;
:func:`code_roots` points it at other source trees (tests).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISREG
from typing import Any, TypeVar

from prefect import task
from prefect.cache_policies import TASK_SOURCE, CachePolicy
from prefect.context import TaskRunContext
from prefect.settings import (
    PREFECT_LOCAL_STORAGE_PATH,
    PREFECT_RESULTS_PERSIST_BY_DEFAULT,
    temporary_settings,
)
from prefect.transactions import get_transaction
from prefect.utilities.hashing import hash_objects
from pydantic import BaseModel

from tasks.io.atomic import atomic_write, file_fingerprint

F = TypeVar("F", bound=Callable[..., Any])

MISSING = "<missing>"
#: Retries of tasks that can fail for reasons outside the task (JVM start, a download):
#: ``artifact_task(..., **TRANSIENT)``.
TRANSIENT: dict[str, Any] = {"retries": 2, "retry_delay_seconds": 5}
_fingerprints: dict[tuple[str, int, int], str] = {}
#: Packages whose every file is part of the code fingerprint (next to ``tasks/``).
CODE_PACKAGES = ("flows", "tasks", "models")
#: Libraries that compute results: import name -> distribution names to try.
RESULT_LIBRARIES: dict[str, tuple[str, ...]] = {
    "torch": ("torch",), "transformers": ("transformers",), "pyserini": ("pyserini",),
    "faiss": ("faiss-cpu", "faiss-gpu", "faiss"), "flair": ("flair",)}
_code_roots: list[tuple[Path, ...]] = [
    tuple(Path(__file__).resolve().parents[1] / name for name in CODE_PACKAGES)]


def library_versions(libraries: dict[str, tuple[str, ...]] | None = None) -> dict[str, str]:
    """Installed version of each library (``"absent"`` when none of its distributions is)."""
    from importlib import metadata

    versions: dict[str, str] = {}
    for name, distributions in (RESULT_LIBRARIES if libraries is None else libraries).items():
        versions[name] = "absent"
        for distribution in distributions:
            with contextlib.suppress(metadata.PackageNotFoundError):
                versions[name] = f"{distribution}=={metadata.version(distribution)}"
                break
    return versions


@functools.lru_cache(maxsize=8)
def _code_fingerprint(roots: tuple[Path, ...]) -> str:
    digest = hashlib.sha256()
    for root in roots:
        files = sorted(p for p in root.rglob("*") if p.is_file()
                       and "__pycache__" not in p.parts and not p.name.startswith("."))
        for path in files:
            rel = f"{root.name}/{path.relative_to(root).as_posix()}"
            digest.update(rel.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    digest.update(json.dumps(library_versions(), sort_keys=True).encode())
    return digest.hexdigest()


def code_fingerprint() -> str:
    """sha256 of the source tree (every file under the roots of :func:`code_roots`, by path
    and content) and of :func:`library_versions`; computed once per process and root set."""
    return _code_fingerprint(_code_roots[-1])


@contextlib.contextmanager
def code_roots(*roots: Path) -> Iterator[None]:
    """Fingerprint these source directories instead of qastress's own (tests)."""
    _code_roots.append(tuple(Path(root).resolve() for root in roots))
    try:
        yield
    finally:
        _code_roots.pop()


def path_fingerprint(path: Path) -> str:
    """Content fingerprint of a file or artifact directory (memoised on size + mtime)."""
    if not path.exists():
        return MISSING
    if path.is_dir():
        manifest = path / "manifest.json"
        if manifest.is_file():
            with contextlib.suppress(ValueError, OSError):
                recorded = json.loads(manifest.read_text(encoding="utf-8")).get("fingerprint")
                if recorded:
                    return str(recorded)
        return file_fingerprint(path)
    stat = path.stat()
    memo_key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if memo_key not in _fingerprints:
        _fingerprints[memo_key] = file_fingerprint(path)
    return _fingerprints[memo_key]


def stable_value(value: Any) -> Any:
    """A hashable stand-in for a task input: paths become their content fingerprints."""
    if isinstance(value, Path):
        return {"path": str(value), "sha256": path_fingerprint(value)}
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k): stable_value(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, list | tuple | set | frozenset):
        items = [stable_value(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, set | frozenset) else items
    return value


@dataclass
class FileFingerprintPolicy(CachePolicy):
    """Cache key = task source + :func:`code_fingerprint` + inputs, file inputs by content.

    ``outputs`` names parameters that are paths the task writes: hashed by path, and when one is
    missing, or was last written by another key (see the module docstring), the stored record
    for the key is removed so the task is recomputed. ``parts`` names parameters that say which
    part of a shared output a call writes (``name`` for the test sets that share one directory).
    """

    outputs: tuple[str, ...] = field(default_factory=tuple)
    parts: tuple[str, ...] = field(default_factory=tuple)

    def compute_key(self, task_ctx: TaskRunContext, inputs: dict[str, Any],
                    flow_parameters: dict[str, Any], **kwargs: Any) -> str | None:
        source = TASK_SOURCE.compute_key(task_ctx, inputs, flow_parameters, **kwargs)
        hashed = {
            name: (str(value) if name in self.outputs else stable_value(value))
            for name, value in (inputs or {}).items()
        }
        key = hash_objects({"source": source, "code": code_fingerprint(), "inputs": hashed},
                           raise_on_failure=True)
        outputs = {name: inputs.get(name) for name in self.outputs}
        present = all(path.exists() for value in outputs.values() for path in _output_paths(value))
        parts = {name: inputs.get(name) for name in self.parts}
        if not (present and _stamped_by(outputs, parts, key)):
            _drop_record(key)
        return key


def _output_paths(value: Any) -> list[Path]:
    """The paths an output parameter names (a path, or a list or tuple of them; None: none)."""
    if isinstance(value, str | Path):
        return [Path(value)]
    if isinstance(value, list | tuple):
        return [path for item in value for path in _output_paths(item)]
    return []


def _local_storage(store: Any = None) -> Path | None:
    """The local result storage directory of ``store`` (default: the current one); ``None``
    when results are not stored on a local file system."""
    from prefect.results import get_default_result_storage, get_result_store

    store = store if store is not None else get_result_store()
    storage = store.result_storage or get_default_result_storage(_sync=True)
    resolve = getattr(storage, "_resolve_path", None)
    return None if resolve is None else Path(resolve("."))


def _stamp_file(root: Path, outputs: dict[str, Any], parts: dict[str, Any]) -> Path | None:
    """Where the stamp of one combination of output paths and parts lives (``None``: no output
    paths).

    A stamp belongs to the whole combination a call writes, not to each path: calls that share
    one directory but differ in their other outputs (the dev and the adversarial set's human
    evaluation, both writing their accepted pairs into the paraphrased sets' directory), or in
    the part they write (``parts``: the dev and the adversarial test set, by ``name``), write
    different files there and do not invalidate each other; calls with the very same outputs
    (a reader re-trained into one directory) do.
    """
    paths = [[name, [str(path.resolve()) for path in _output_paths(value)]]
             for name, value in sorted(outputs.items())]
    if not any(found for _, found in paths):
        return None
    slot = [paths, [[name, repr(value)] for name, value in sorted(parts.items())]]
    digest = hashlib.sha256(json.dumps(slot).encode("utf-8")).hexdigest()
    return root / ".output-stamps" / digest


def _stamped_by(outputs: dict[str, Any], parts: dict[str, Any], key: str) -> bool:
    """Whether the last task run that wrote this combination of outputs was the one of ``key``,
    and every file it wrote is still there at the size it wrote."""
    root = _local_storage()
    if root is None:  # no local storage to keep stamps in: presence is all we can check
        return True
    stamp = _stamp_file(root, outputs, parts)
    if stamp is None:
        return True
    if not stamp.is_file():
        return False
    text = stamp.read_text(encoding="utf-8")
    try:
        recorded = json.loads(text)
    except ValueError:  # a stamp of before the file lists: the key alone
        return text == key
    if not isinstance(recorded, dict) or recorded.get("key") != key:
        return False
    return all(_size(Path(path)) == size for path, size in recorded.get("files", {}).items())


def _size(path: Path) -> int | None:
    """The file's size; ``None`` when it is not a file."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_size if S_ISREG(stat.st_mode) else None


def _file_states(outputs: dict[str, Any]) -> dict[str, tuple[int, int, int]]:
    """Every file at or under the output paths: resolved path -> (size, mtime_ns, inode)."""
    states: dict[str, tuple[int, int, int]] = {}
    for value in outputs.values():
        for path in _output_paths(value):
            root = path.resolve()  # once: the walk's paths below it are resolved too
            files = [str(root)] if root.is_file() else [  # a folder that vanishes is skipped
                os.path.join(folder, name) for folder, _, names in os.walk(root) for name in names]
            for file in files:
                with contextlib.suppress(OSError):  # a temporary file gone meanwhile
                    stat = os.stat(file)
                    states[file] = (stat.st_size, stat.st_mtime_ns, stat.st_ino)
    return states


def _stamp_outputs(outputs: dict[str, Any], parts: dict[str, Any],
                   before: dict[str, tuple[int, int, int]]) -> None:
    """Stamp ``outputs`` with the cache key of the task run in progress and the files it wrote
    (those new or changed since ``before``); a no-op outside a task run."""
    txn = get_transaction()
    if txn is None or not txn.key:
        return
    root = _local_storage(txn.store)
    stamp = None if root is None else _stamp_file(root, outputs, parts)
    if stamp is None:
        return
    written = {path: state[0] for path, state in sorted(_file_states(outputs).items())
               if before.get(path) != state}
    stamp.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(stamp) as stream:
        json.dump({"key": txn.key, "files": written}, stream)


def _drop_record(key: str) -> None:
    """Remove the stored cache record of ``key`` from the current local result storage."""
    root = _local_storage()
    if root is None:  # not a local file system: nothing we can safely remove
        return
    (root / key).unlink(missing_ok=True)


def _stamping(func: F, outputs: Sequence[str], parts: Sequence[str]) -> F:
    """``func`` that stamps its output paths with the running task's cache key on success."""
    if not outputs:
        return func
    signature = inspect.signature(func)

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        output_args = {name: bound.arguments.get(name) for name in outputs}
        before = _file_states(output_args)
        result = func(*args, **kwargs)
        _stamp_outputs(output_args, {name: bound.arguments.get(name) for name in parts}, before)
        return result

    return run  # type: ignore[return-value]


def artifact_task(fn: F | None = None, *, outputs: Sequence[str] = (),
                  parts: Sequence[str] = (), name: str | None = None, retries: int = 0,
                  **task_kwargs: Any) -> Any:
    """Wrap a plain function as a cached, persisted Prefect task (the one line on top).

    ``outputs`` lists the parameters that are output paths, ``parts`` those that name the part
    of a shared output a call writes (see :class:`FileFingerprintPolicy`).
    """

    def wrap(func: F) -> Any:
        return task(
            _stamping(func, outputs, parts),
            name=name or func.__name__.replace("_", " "),
            cache_policy=FileFingerprintPolicy(outputs=tuple(outputs), parts=tuple(parts)),
            persist_result=True,
            retries=retries,
            **task_kwargs,
        )

    return wrap(fn) if fn is not None else wrap


@contextlib.contextmanager
def run_settings(state_dir: Path) -> Iterator[None]:
    """Persist task results (the cache) under ``state_dir/results`` for flows started inside.

    Prefect fixes a flow run's result store when the run starts, so entry points (the CLI, DVC
    stages, tests) wrap the flow *call* in this context rather than the flow body.
    """
    results = (Path(state_dir) / "results").resolve()
    results.mkdir(parents=True, exist_ok=True)
    with temporary_settings(updates={
        PREFECT_LOCAL_STORAGE_PATH: results,
        PREFECT_RESULTS_PERSIST_BY_DEFAULT: True,
    }):
        yield
