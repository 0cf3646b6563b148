"""Options of the MLM pre-training, re-exported from the configuration layer
(:mod:`tasks.mlm_config`), where ``tasks/config.py`` embeds them."""

from tasks.mlm_config import MlmConfig

__all__ = ["MlmConfig"]
