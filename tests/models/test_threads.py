"""``torch_threads``: torch's CPU thread count for one piece of work, restored afterwards."""

from __future__ import annotations

import pytest
import torch

from models.threads import torch_threads


def test_sets_the_count_inside_and_restores_it_even_on_error():
    before = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with pytest.raises(RuntimeError, match="boom"), torch_threads(1):
        raise RuntimeError("boom")
    assert torch.get_num_threads() == before


def test_none_leaves_the_setting_alone():
    before = torch.get_num_threads()
    with torch_threads(None):
        assert torch.get_num_threads() == before
    assert torch.get_num_threads() == before


def test_machine_count_ignores_the_callers_setting(monkeypatch):
    from models.threads import machine_cpu_threads, pinned_torch_threads

    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert machine_cpu_threads() == 3
    monkeypatch.delenv("OMP_NUM_THREADS")
    machine = machine_cpu_threads()
    assert machine >= 1
    before = torch.get_num_threads()
    for caller in (1, machine + 1):
        with torch_threads(caller), pinned_torch_threads(None):
            assert torch.get_num_threads() == machine
        with torch_threads(caller), pinned_torch_threads(2):
            assert torch.get_num_threads() == 2
    assert torch.get_num_threads() == before
