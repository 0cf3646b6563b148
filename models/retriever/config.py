"""Training options of the DPR bi-encoder, re-exported from the configuration layer
(:mod:`tasks.retriever_config`), where ``tasks/config.py`` embeds them."""

from tasks.retriever_config import (
    STRATEGIES,
    Freeze,
    RetrieverTrainConfig,
)

__all__ = ["STRATEGIES", "Freeze", "RetrieverTrainConfig"]
