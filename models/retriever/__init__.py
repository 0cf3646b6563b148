"""DPR bi-encoder training (Karpukhin et al., 2020) with Lightning.

```python
from models.retriever import RetrieverTrainConfig, load_samples, train_retriever
from tasks.training.retriever import encoder_spec

train = load_samples(["nq-train.json"], hard_negatives=1)
state = train_retriever(train, "bert-dir", RetrieverTrainConfig(max_steps=100), out, ckpts)
spec = encoder_spec(out)   # the EncoderSpec of the trained pair (dense retrieval)
```

Torch-free imports here: ``config`` only; the rest is imported on use.
"""

from __future__ import annotations

from typing import Any

from models.retriever.config import RetrieverTrainConfig

__all__ = ["RetrieverTrainConfig", "check_index_dim", "load_samples", "train_retriever"]


def __getattr__(name: str) -> Any:
    if name == "train_retriever":
        from models.retriever.api import train_retriever

        return train_retriever
    if name == "load_samples":
        from models.retriever.data import load_samples

        return load_samples
    if name == "check_index_dim":
        from models.retriever import export

        return getattr(export, name)
    raise AttributeError(name)
