"""Importing Flair without its import-time ``logging.config.dictConfig``.

``flair/__init__.py`` (0.15.1) ends with ``logging.config.dictConfig(...)`` to give the ``flair``
logger a stdout handler. A non-incremental ``dictConfig`` first flushes and closes *every*
handler of the process while it holds logging's module lock. In a process where Prefect's API
log handler is shipping run logs, that flush waits for Prefect's log worker to drain, and the
worker's HTTP client (httpcore) logs, which needs the same lock: a deadlock. Seen in a demo run
(Session 34): the paraphrase stage, run in a Dask worker, imported Flair after training its
taggers and hung for good at 0 % CPU (``py-spy``: ``dictConfig -> APILogHandler.flush ->
drain_all`` against ``httpcore ... Logger.isEnabledFor -> _acquireLock``). The same class of
hang is PrefectHQ/prefect#9597 and python/cpython#84551.

:func:`import_flair` imports Flair with that one call replaced by what it sets up (the
``flair`` logger's own stdout handler, level and propagation); no other handler is touched.
Every Flair import of the project goes through it.
"""

from __future__ import annotations

import importlib
import logging
import logging.config
import sys
import threading
from types import ModuleType
from typing import Any

#: The logger Flair's import-time configuration names, and only it.
FLAIR_LOGGER = "flair"

_patch_lock = threading.Lock()


def is_flair_logging_config(config: Any) -> bool:
    """Whether ``config`` is Flair's import-time configuration: a dict whose only logger is
    ``flair``, with handlers and formatters given by name (anything else is not ours to
    reinterpret and goes to the real ``dictConfig``)."""
    return (isinstance(config, dict) and set(config.get("loggers", {})) == {FLAIR_LOGGER}
            and not config.get("root") and not config.get("incremental")
            and all(isinstance(h, dict) and h.get("class") == "logging.StreamHandler"
                    for h in config.get("handlers", {}).values()))


def configure_flair_logger(config: dict) -> logging.Logger:
    """Apply Flair's logging ``config`` to the ``flair`` logger alone, without closing any other
    handler; idempotent (a handler it added before is replaced, not doubled)."""
    formatters = config.get("formatters", {})
    spec = config["loggers"][FLAIR_LOGGER]
    logger = logging.getLogger(FLAIR_LOGGER)
    for old in [h for h in logger.handlers if getattr(h, "_from_flair_config", False)]:
        logger.removeHandler(old)
    for name in spec.get("handlers", []):
        handler_spec = config["handlers"][name]
        stream = handler_spec.get("stream", "ext://sys.stderr")
        handler = logging.StreamHandler(sys.stdout if stream == "ext://sys.stdout"
                                        else sys.stderr)
        handler.setLevel(handler_spec.get("level", logging.NOTSET))
        formatter = formatters.get(handler_spec.get("formatter"), {})
        handler.setFormatter(logging.Formatter(formatter.get("format")))
        handler._from_flair_config = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
    if "level" in spec:
        logger.setLevel(spec["level"])
    logger.propagate = spec.get("propagate", True)
    return logger


def import_flair() -> ModuleType:
    """``import flair``, with its import-time ``dictConfig`` applied to the ``flair`` logger only
    (module docstring); a second call returns the imported module."""
    if "flair" in sys.modules:
        return sys.modules["flair"]
    with _patch_lock:
        if "flair" in sys.modules:
            return sys.modules["flair"]
        real = logging.config.dictConfig

        def flair_logger_only(config: Any) -> None:
            if is_flair_logging_config(config):
                configure_flair_logger(config)
            else:
                real(config)

        logging.config.dictConfig = flair_logger_only
        try:
            return importlib.import_module("flair")
        finally:
            logging.config.dictConfig = real
