"""The base of every configuration section (config layer; imports pydantic only)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    """Base of every config section: unknown keys are errors, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def check_devices(value: Any) -> Any:
    """Lightning's ``devices`` of a training section: ``"auto"``, a count >= 1 or a non-empty
    tuple of device indices >= 0."""
    if isinstance(value, int) and value < 1:
        raise ValueError("devices must be >= 1, 'auto' or a tuple of device indices")
    if isinstance(value, tuple) and (not value or any(i < 0 for i in value)):
        raise ValueError("a tuple of devices must be non-empty device indices >= 0")
    return value
