"""Which training steps log their loss to Lightning (models/logged_steps.py)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from models.logged_steps import is_last_step, logs_step, records_step


def _trainer(max_steps=-1, max_epochs=None, epoch=0, last_batch=False):
    return SimpleNamespace(max_steps=max_steps, max_epochs=max_epochs, current_epoch=epoch,
                           is_last_batch=last_batch)


def test_records_the_first_and_every_nth_step():
    assert [s for s in range(1, 13) if records_step(s, 4)] == [1, 4, 8, 12]
    assert [s for s in range(1, 4) if records_step(s, 1)] == [1, 2, 3]


@pytest.mark.parametrize("trainer, step, last", [
    (_trainer(max_steps=7), 6, False),
    (_trainer(max_steps=7), 7, True),
    (_trainer(max_epochs=2, epoch=0, last_batch=True), 3, False),  # the end of epoch 1 of 2
    (_trainer(max_epochs=2, epoch=1, last_batch=False), 5, False),
    (_trainer(max_epochs=2, epoch=1, last_batch=True), 6, True),
    (_trainer(max_epochs=None, epoch=0, last_batch=True), 3, True),  # unset: one epoch
    (_trainer(max_steps=None, max_epochs=-1, epoch=0, last_batch=True), 3, True),
])
def test_the_last_step_by_steps_or_by_epochs(trainer, step, last):
    assert is_last_step(trainer, step) is last


def test_logs_the_recorded_steps_and_the_last():
    trainer = _trainer(max_steps=7)
    assert [s for s in range(1, 8) if logs_step(trainer, s, 3)] == [1, 3, 6, 7]
