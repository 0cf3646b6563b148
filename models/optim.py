"""The AdamW every trainer uses: weight decay on the weight matrices only, torch's fused kernel.

``fused=True`` runs one kernel over all parameter tensors instead of a Python loop over them:
the same update up to rounding, and on CPU a third to a fifth of the for-loop's time
(``bench/optimizer_step.py``; for the demo's small BERTs the loop was 25-40 % of a step).
Two cases keep the for-loop implementation: a parameter on a device the fused kernel does not
cover, and fp16 mixed precision, where Lightning's gradient scaler must unscale gradients
before clipping and refuses an optimizer that unscales inside its step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch

#: Precisions whose Lightning plugin scales the loss (GradScaler): no fused optimizer there.
SCALED_PRECISIONS = frozenset(("16-mixed", "16"))
FUSED_DEVICES = frozenset(("cpu", "cuda"))


def bert_no_decay(name: str, param: torch.nn.Parameter) -> bool:
    """BERT's rule: no weight decay on biases, LayerNorm weights and other vectors."""
    return param.ndim < 2 or "LayerNorm" in name


def decay_groups(named_parameters: Iterable[tuple[str, torch.nn.Parameter]],
                 weight_decay: float,
                 no_decay: Callable[[str, torch.nn.Parameter], bool] = bert_no_decay
                 ) -> list[dict[str, Any]]:
    """Two parameter groups of the trainable parameters: ``weight_decay`` on those ``no_decay``
    rejects, none on the rest (always both groups, in that order, even when one is empty)."""
    decay, plain = [], []
    for name, param in named_parameters:
        if param.requires_grad:
            (plain if no_decay(name, param) else decay).append(param)
    return [{"params": decay, "weight_decay": weight_decay},
            {"params": plain, "weight_decay": 0.0}]


def can_fuse(groups: list[dict[str, Any]], precision: str | None = None) -> bool:
    """Whether torch's fused AdamW can take ``groups`` under Lightning ``precision``."""
    if precision is not None and str(precision) in SCALED_PRECISIONS:
        return False
    params = [p for group in groups for p in group["params"]]
    return bool(params) and all(p.device.type in FUSED_DEVICES and p.is_floating_point()
                                for p in params)


def adamw(groups: list[dict[str, Any]], *, lr: float, precision: str | None = None,
          **options: Any) -> torch.optim.AdamW:
    """``torch.optim.AdamW`` over ``groups``, fused where :func:`can_fuse` allows it (else
    torch's default implementation); ``options`` go to AdamW (``betas``, ``eps``, ...)."""
    fused = can_fuse(groups, precision)
    return torch.optim.AdamW(groups, lr=lr, fused=True if fused else None, **options)
