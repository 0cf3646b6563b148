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
