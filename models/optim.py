"""The AdamW every trainer uses: weight decay on the weight matrices only, torch's fused kernel.

``fused=True`` runs one kernel over all parameter tensors instead of a Python loop over them:
the same update up to rounding, and on CPU a third to a fifth of the for-loop's time
(``bench/optimizer_step.py``; for the demo's small BERTs the loop was 25-40 % of a step).
Two cases keep torch's default implementation: a parameter on a device the fused kernel does
not cover, and mixed precision (``16-mixed`` and ``bf16-mixed``): Lightning's mixed-precision
plugin refuses gradient clipping with an optimizer that unscales inside its step, bf16 included
(an H100 run of ``bench/bench_retriever_training.py --precision bf16-mixed`` stopped with its
``RuntimeError`` before this rule covered bf16). ``precision="auto"`` may resolve to bf16-mixed,
so it does not fuse either: a module asks its Trainer for the resolved precision
(:func:`trainer_precision`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch

#: Precisions Lightning runs through its mixed-precision plugin, whose gradient clipping refuses
#: an optimizer that unscales inside its step (``fused``); ``auto`` may become one of them.
MIXED_PRECISIONS = frozenset(("16-mixed", "16", "bf16-mixed", "bf16", "auto"))
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


def trainer_precision(module: Any, configured: str | None) -> str | None:
    """The precision ``module`` trains under: its Trainer's (``auto`` already resolved) when
    one is attached, else ``configured``."""
    try:
        trainer = module.trainer
    except RuntimeError:  # Lightning: "... is not attached to a `Trainer`"
        return configured
    return str(trainer.precision) if trainer is not None else configured


def can_fuse(groups: list[dict[str, Any]], precision: str | None = None) -> bool:
    """Whether torch's fused AdamW can take ``groups`` under Lightning ``precision``."""
    if precision is not None and str(precision) in MIXED_PRECISIONS:
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
