"""Configuration of the extractive reader, re-exported from the configuration layer
(:mod:`tasks.reader_config`), where ``tasks/config.py`` embeds it."""

from tasks.reader_config import DEFAULT_MODEL, READER_CONFIG_FILE, ReaderConfig, WindowConfig

__all__ = ["DEFAULT_MODEL", "READER_CONFIG_FILE", "ReaderConfig", "WindowConfig"]
