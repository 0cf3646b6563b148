"""Masked-language-model pre-training of a small BERT on the passages (the offline start point
of retriever training: no plain pre-trained BERT ships in a wheel).

```python
from models.mlm import MlmConfig, pretrain_mlm

state = pretrain_mlm(texts, MlmConfig(max_steps=500), "data/models/mlm-bert")
# AutoModel.from_pretrained("data/models/mlm-bert") -> BertModel; AutoTokenizer likewise
```
"""

from __future__ import annotations

from typing import Any

from models.mlm.config import MlmConfig

__all__ = ["MlmConfig", "pretrain_mlm"]


def __getattr__(name: str) -> Any:
    if name == "pretrain_mlm":
        from models.mlm.pretrain import pretrain_mlm

        return pretrain_mlm
    raise AttributeError(name)
