"""Batches of windows: dynamic padding (to the longest window of the batch) into tensors."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch.utils.data import Dataset

from models.reader.features import Window


class WindowDataset(Dataset):
    """Windows as a map-style dataset (items are :class:`Window`)."""

    def __init__(self, windows: Sequence[Window]) -> None:
        self.windows = list(windows)

    def __len__(self) -> int:
        return len(self.windows)

    def __getitem__(self, index: int) -> Window:
        return self.windows[index]


class WindowCollator:
    """Pads a list of windows into model inputs (``labels`` adds start/end positions)."""

    def __init__(self, pad_id: int, labels: bool = True) -> None:
        self.pad_id = pad_id
        self.labels = labels

    def __call__(self, windows: Sequence[Window]) -> dict[str, torch.Tensor]:
        length = max(len(w) for w in windows)
        ids = torch.full((len(windows), length), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(windows), length), dtype=torch.long)
        types = (torch.zeros((len(windows), length), dtype=torch.long)
                 if windows[0].token_type_ids is not None else None)
        for row, window in enumerate(windows):
            n = len(window)
            ids[row, :n] = torch.tensor(window.input_ids, dtype=torch.long)
            mask[row, :n] = 1
            if types is not None:
                types[row, :n] = torch.tensor(window.token_type_ids, dtype=torch.long)
        batch = {"input_ids": ids, "attention_mask": mask}
        if types is not None:
            batch["token_type_ids"] = types
        if self.labels:
            batch["start_positions"] = torch.tensor([w.start_position for w in windows])
            batch["end_positions"] = torch.tensor([w.end_position for w in windows])
        return batch
