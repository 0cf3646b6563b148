"""EndState: the global-zero process records the loop's state and the module's history when
training ends, for a launching process that ``ddp_spawn`` leaves without them."""

from __future__ import annotations

import pickle

import pytorch_lightning as pl
import torch

from models.end_state import EndState, read_end_state
from models.lightning_quiet import quiet_lightning


class _Tiny(pl.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(2, 1)
        self.history: list[dict] = []

    def training_step(self, batch, batch_idx):
        loss = self.layer(batch[0]).pow(2).mean()
        self.log("train_loss", loss)
        self.history.append({"step": self.global_step + 1})
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

    def end_state(self) -> dict:
        return {"seen": len(self.history)}


def test_the_end_state_is_what_the_trainer_and_the_module_say(tmp_path):
    data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.ones(6, 2)),
                                       batch_size=2)
    path = tmp_path / "train_end.json"
    assert read_end_state(path) == {}
    module = _Tiny()
    with quiet_lightning():
        trainer = pl.Trainer(accelerator="cpu", max_steps=5, logger=False,
                             enable_checkpointing=False, enable_progress_bar=False,
                             enable_model_summary=False, callbacks=[EndState(path)])
        trainer.fit(module, data)
    end = read_end_state(path)
    assert end["global_step"] == trainer.global_step == 5
    assert end["epochs"] == trainer.current_epoch
    assert end["log_history"] == module.history == [{"step": s} for s in range(1, 6)]
    assert end["seen"] == 5 and set(end["metrics"]) == {"train_loss"}
    assert pickle.loads(pickle.dumps(EndState(path))).path == str(path)  # ddp_spawn pickles it
