"""Importing Flair leaves every other logging handler alone (models/flair_import.py)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from models.flair_import import configure_flair_logger, is_flair_logging_config

pytest.importorskip("flair")

ROOT = Path(__file__).resolve().parents[2]

# A process with a handler of its own on the root logger (as Prefect's API log handler is),
# which records whether anyone flushed or closed it, then imports Flair one way or the other.
_SCRIPT = textwrap.dedent("""
    import json, logging, logging.config, sys
    calls = []

    class Recording(logging.Handler):
        def emit(self, record): pass
        def flush(self): calls.append("flush")
        def close(self):
            calls.append("close")
            super().close()

    logging.getLogger().addHandler(Recording())
    real = logging.config.dictConfig
    if sys.argv[1] == "helper":
        from models.flair_import import import_flair
        flair = import_flair()
    else:
        import flair
    logger = logging.getLogger("flair")
    print(json.dumps({
        "calls": calls,
        "dictConfig restored": logging.config.dictConfig is real,
        "handlers": [[type(h).__name__, getattr(h, "stream", None) is sys.stdout, h.level,
                      h.formatter._fmt if h.formatter else None] for h in logger.handlers],
        "level": logger.level, "propagate": logger.propagate,
        "again": sys.argv[1] != "helper" or import_flair() is flair,
    }))
""")


def _import_in_fresh_process(how: str) -> dict:
    done = subprocess.run([sys.executable, "-c", _SCRIPT, how], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_import_flair_touches_no_other_handler_and_sets_up_flairs_logger_as_flair_does() -> None:
    plain = _import_in_fresh_process("plain")
    # the hazard: Flair's own import flushes and closes a handler it does not own (under
    # logging's lock; with Prefect's API handler that flush deadlocked a demo run)
    assert "flush" in plain["calls"] and "close" in plain["calls"]

    helper = _import_in_fresh_process("helper")
    assert helper["calls"] == []
    assert helper["dictConfig restored"] and helper["again"]
    # the flair logger ends up as Flair's own configuration leaves it
    for key in ("handlers", "level", "propagate"):
        assert helper[key] == plain[key], key
    assert helper["handlers"] == [
        ["StreamHandler", True, logging.INFO, "%(asctime)-15s %(message)s"]]


FLAIRS_CONFIG = {
    "version": 1, "disable_existing_loggers": False,
    "formatters": {"standard": {"format": "%(asctime)-15s %(message)s"}},
    "handlers": {"console": {"level": "INFO", "class": "logging.StreamHandler",
                             "formatter": "standard", "stream": "ext://sys.stdout"}},
    "loggers": {"flair": {"handlers": ["console"], "level": "INFO", "propagate": False}},
}


def test_only_flairs_own_configuration_is_reinterpreted() -> None:
    assert is_flair_logging_config(FLAIRS_CONFIG)
    with_root = {**FLAIRS_CONFIG, "root": {"level": "DEBUG"}}
    other_logger = {**FLAIRS_CONFIG, "loggers": {"flair": {}, "torch": {}}}
    file_handler = {**FLAIRS_CONFIG, "handlers": {"console": {"class": "logging.FileHandler"}}}
    for config in (with_root, other_logger, file_handler, {**FLAIRS_CONFIG, "incremental": True},
                   "not a dict"):
        assert not is_flair_logging_config(config), config


def test_configuring_flairs_logger_twice_does_not_double_its_handler() -> None:
    logger = logging.getLogger("flair")
    saved = (list(logger.handlers), logger.level, logger.propagate)
    try:
        configure_flair_logger(FLAIRS_CONFIG)
        configure_flair_logger(FLAIRS_CONFIG)
        ours = [h for h in logger.handlers if getattr(h, "_from_flair_config", False)]
        assert len(ours) == 1 and ours[0].stream is sys.stdout and ours[0].level == logging.INFO
        assert logger.level == logging.INFO and logger.propagate is False
    finally:
        logger.handlers[:] = saved[0]
        logger.setLevel(saved[1])
        logger.propagate = saved[2]
