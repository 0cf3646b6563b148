"""Make a Lightning module's training crash at a chosen step (the resume tests' kill)."""

from __future__ import annotations

from collections.abc import Callable


def crash_before_step(monkeypatch, module_class: type, step: int) -> Callable[[], None]:
    """``module_class.training_step`` raises ``RuntimeError("crash before step {step + 1}")``
    once the trainer has made ``step`` optimizer steps (after the checkpoints of the steps
    before). Returns the function that puts the real training step back."""
    original = module_class.training_step

    def crashing(self, batch, batch_idx):
        if self.global_step == step:
            raise RuntimeError(f"crash before step {step + 1}")
        return original(self, batch, batch_idx)

    monkeypatch.setattr(module_class, "training_step", crashing)
    return lambda: monkeypatch.setattr(module_class, "training_step", original)
