"""Train, save, load and run the suggestion-guided paraphraser.

A saved paraphraser is a directory in a Hugging-Face-like layout, written atomically::

    config.json          architecture, special ids, generation defaults (ModelConfig)
    model.safetensors    weights
    spiece.model         the SentencePiece model (a copy, so the directory is self-contained)
    training_args.json   the ParaphraserConfig used, data sizes, resolved hardware, versions
    trainer_state.json   loss history (train loss / NLL / lr every log_every_n_steps, val loss)
"""

from __future__ import annotations

import hashlib
import json
import platform
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from models import resume
from models.lightning_quiet import quiet_lightning
from models.paraphraser.config import ModelConfig, ParaphraserConfig
from models.paraphraser.data import (
    Triple,
    check_triples,
    pad_sources,
    pad_targets,
    split_triples,
)
from models.paraphraser.generation import Batch, beam_search, greedy_search
from models.paraphraser.network import PointerGeneratorTransformer
from models.paraphraser.tokenizer import EncodedSource, ParaphraseTokenizer
from models.threads import pinned_torch_threads
from tasks.io.atomic import atomic_dir, write_json

Input = tuple[str | None, str]
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
SPM_FILE = "spiece.model"
TRAINING_ARGS_FILE = "training_args.json"
TRAINER_STATE_FILE = "trainer_state.json"


def _check_inputs(inputs: Sequence[Input]) -> list[Input]:
    out = []
    for i, item in enumerate(inputs):
        if not isinstance(item, tuple | list) or len(item) != 2:
            raise ValueError(f"inputs[{i}]: expected (suggestion | None, source), got {item!r}")
        suggestion, source = item
        if suggestion is not None and not isinstance(suggestion, str):
            raise ValueError(f"inputs[{i}]: suggestion must be a string or None, "
                             f"got {suggestion!r}")
        if not isinstance(source, str) or not source.strip():
            raise ValueError(f"inputs[{i}]: source must be a non-empty string, got {source!r}")
        out.append((suggestion or None, source))
    return out


class Paraphraser:
    """A trained paraphraser: ``generate`` paraphrases of ``(suggestion | None, source)``."""

    def __init__(self, model: PointerGeneratorTransformer, tokenizer: ParaphraseTokenizer,
                 device: str | torch.device = "cpu") -> None:
        self.model = model.to(device).eval()
        self.tokenizer = tokenizer
        self.config: ModelConfig = model.cfg
        self.device = torch.device(device)
        self._blocked = torch.tensor(tokenizer.generation_blocklist(), dtype=torch.long,
                                     device=self.device)

    # ---------------------------------------------------------------------- persistence
    @classmethod
    def from_pretrained(cls, path: str | Path, device: str | torch.device = "cpu"
                        ) -> Paraphraser:
        """Load a directory written by :meth:`save_pretrained` / :func:`train_paraphraser`."""
        from safetensors.torch import load_file

        path = Path(path)
        for name in (CONFIG_FILE, WEIGHTS_FILE, SPM_FILE):
            if not (path / name).is_file():
                raise FileNotFoundError(f"{path}: not a saved paraphraser ({name} is missing)")
        cfg = ModelConfig.model_validate(
            json.loads((path / CONFIG_FILE).read_text(encoding="utf-8")))
        tokenizer = ParaphraseTokenizer(path / SPM_FILE, lowercase=cfg.lowercase,
                                        max_len=cfg.max_len,
                                        copy_word_pieces=cfg.copy_word_pieces)
        if tokenizer.vocab_size != cfg.vocab_size:
            raise ValueError(f"{path}: {SPM_FILE} has {tokenizer.spm_vocab_size} pieces but "
                             f"{CONFIG_FILE} expects {cfg.spm_vocab_size}")
        model = PointerGeneratorTransformer(cfg)
        model.load_state_dict(load_file(str(path / WEIGHTS_FILE)), strict=True)
        return cls(model, tokenizer, device)

    def save_pretrained(self, path: str | Path, training_args: Mapping[str, Any] | None = None,
                        trainer_state: Mapping[str, Any] | None = None) -> Path:
        """Write the checkpoint directory atomically (replacing an existing one)."""
        from safetensors.torch import save_file

        path = Path(path)
        with atomic_dir(path) as tmp:
            write_json(tmp / CONFIG_FILE, self.config.model_dump(mode="json"), indent=2)
            weights = {k: v.detach().to("cpu").contiguous()
                       for k, v in self.model.state_dict().items()}
            save_file(weights, str(tmp / WEIGHTS_FILE), metadata={"format": "pt"})
            (tmp / SPM_FILE).write_bytes(self.tokenizer.model_proto)
            if training_args is not None:
                write_json(tmp / TRAINING_ARGS_FILE, dict(training_args), indent=2)
            if trainer_state is not None:
                write_json(tmp / TRAINER_STATE_FILE, dict(trainer_state), indent=2)
        return path

    # ------------------------------------------------------------------------ inference
    def _batches(self, inputs: Sequence[Input], batch_size: int, block_repeats: bool = False):
        """Encode, sort by length (less padding), yield (indices, encoded, Batch).

        With ``block_repeats`` each batch carries the ids that each input (suggestion and
        source, as the decoder writes them) has doubled: the only repeats decoding allows.
        """
        checked = _check_inputs(inputs)
        encoded = [self.tokenizer.encode_source(s, q) for s, q in checked]
        order = sorted(range(len(encoded)), key=lambda i: (-len(encoded[i].input_ids), i))
        for start in range(0, len(order), max(1, batch_size)):
            idx = order[start : start + batch_size]
            chunk = [encoded[i] for i in idx]
            src_ids, src_ext, src_mask, n_oov = pad_sources(chunk, self.tokenizer.pad_id)
            doubled = ([self._doubled(checked[i], encoded[i]) for i in idx]
                       if block_repeats else None)
            batch = Batch(src_ids.to(self.device), src_ext.to(self.device),
                          src_mask.to(self.device), n_oov, doubled)
            yield idx, chunk, batch

    def _doubled(self, item: Input, enc: EncodedSource) -> frozenset[int]:
        """Ids that the suggestion or the source has twice in a row (decoder ids)."""
        doubled: set[int] = set()
        for text in item:
            if text:
                ids = self.tokenizer.encode_target(text, enc)[:-1]  # without </s>
                doubled.update(a for a, b in zip(ids, ids[1:], strict=False) if a == b)
        return frozenset(doubled)

    def _decode(self, ids: list[int], enc: EncodedSource) -> str:
        return self.tokenizer.decode(ids, enc.oov_words, enc.oov_word_start)

    @torch.inference_mode()
    def generate(self, inputs: Sequence[Input], beam_size: int | None = None,
                 max_len: int | None = None, length_penalty: float | None = None,
                 min_len: int = 1, batch_size: int = 32,
                 block_repeats: bool | None = None) -> list[str]:
        """Paraphrase each ``(suggestion | None, source)`` with beam search.

        ``beam_size``, ``length_penalty`` and ``block_repeats`` (no token right after itself
        unless the input has it doubled) default to the saved generation settings;
        ``max_len`` (generated pieces, ``</s>`` excluded) to the model's ``max_len``.
        The hypothesis score is ``sum log p / length ** length_penalty``.
        """
        beam = beam_size or self.config.beam_size
        if beam < 1:
            raise ValueError(f"beam_size must be >= 1, got {beam}")
        max_len = max_len or self.config.max_len
        penalty = self.config.length_penalty if length_penalty is None else length_penalty
        block = self.config.block_repeats if block_repeats is None else block_repeats
        out: list[str] = [""] * len(inputs)
        for idx, chunk, batch in self._batches(inputs, batch_size, block):
            ids = beam_search(self.model, batch, beam, max_len, self._blocked, penalty, min_len)
            for i, enc, hyp in zip(idx, chunk, ids, strict=True):
                out[i] = self._decode(hyp, enc)
        return out

    @torch.inference_mode()
    def greedy(self, inputs: Sequence[Input], max_len: int | None = None, min_len: int = 1,
               batch_size: int = 32, block_repeats: bool | None = None) -> list[str]:
        """Greedy (argmax) paraphrases, the reference for ``generate(beam_size=1)``."""
        max_len = max_len or self.config.max_len
        block = self.config.block_repeats if block_repeats is None else block_repeats
        out: list[str] = [""] * len(inputs)
        for idx, chunk, batch in self._batches(inputs, batch_size, block):
            ids = greedy_search(self.model, batch, max_len, self._blocked, min_len)
            for i, enc, hyp in zip(idx, chunk, ids, strict=True):
                out[i] = self._decode(hyp, enc)
        return out

    @torch.inference_mode()
    def score(self, inputs: Sequence[Input], targets: Sequence[str], normalize: bool = True,
              batch_size: int = 32) -> list[float]:
        """Log-likelihood of each target given its input (teacher forcing, one pass).

        ``normalize``: mean log-probability per target token (``</s>`` included), else the sum.
        """
        if len(inputs) != len(targets):
            raise ValueError(f"{len(inputs)} inputs but {len(targets)} targets")
        tok = self.tokenizer
        out = [0.0] * len(inputs)
        for idx, chunk, batch in self._batches(inputs, batch_size):
            labels = [tok.encode_target(targets[i], enc) for i, enc in zip(idx, chunk,
                                                                             strict=True)]
            lab, dec = pad_targets(labels, tok.pad_id, tok.bos_id)
            lab, dec = lab.to(self.device), dec.to(self.device)
            log_probs = self.model(batch.src_ids, batch.src_ext, batch.src_mask, dec,
                                   batch.n_oov)
            mask = lab != tok.pad_id
            token_lp = log_probs.gather(-1, lab.masked_fill(~mask, 0)[..., None]).squeeze(-1)
            total = (token_lp * mask).sum(-1)
            if normalize:
                total = total / mask.sum(-1)
            for i, value in zip(idx, total.tolist(), strict=True):
                out[i] = value
        return out


def load_paraphraser(path: str | Path, device: str | torch.device = "cpu") -> Paraphraser:
    """Load a paraphraser saved by :func:`train_paraphraser`."""
    return Paraphraser.from_pretrained(path, device=device)


def _model_config(config: ParaphraserConfig, tokenizer: ParaphraseTokenizer) -> ModelConfig:
    return ModelConfig(
        spm_vocab_size=tokenizer.spm_vocab_size, vocab_size=tokenizer.vocab_size,
        d_model=config.d_model, heads=config.heads, encoder_layers=config.layers,
        decoder_layers=config.n_decoder_layers, ff=config.ff, dropout=config.dropout,
        max_len=config.max_len, lowercase=config.lowercase,
        copy_word_pieces=config.copy_word_pieces, pad_id=tokenizer.pad_id,
        bos_id=tokenizer.bos_id, eos_id=tokenizer.eos_id, sep_id=tokenizer.sep_id,
        none_id=tokenizer.none_id, unk_id=tokenizer.unk_id, beam_size=config.beam_size,
        length_penalty=config.length_penalty, block_repeats=config.block_repeats)


def resolve_hardware(config: ParaphraserConfig) -> dict[str, Any]:
    """Lightning ``accelerator/devices/strategy/precision`` from the configuration.

    ``strategy="auto"`` with more than one device is DDP; ``precision="auto"`` is bf16-mixed
    on a CUDA device with bf16 support, else 32-true.
    """
    cuda = config.accelerator in ("cuda", "gpu") or (
        config.accelerator == "auto" and torch.cuda.is_available())
    precision = config.precision
    if precision == "auto":
        precision = "bf16-mixed" if cuda and torch.cuda.is_bf16_supported() else "32-true"
    elif precision == "32":
        precision = "32-true"
    strategy = config.strategy
    n = config.n_devices()
    if strategy == "auto" and n is not None and n > 1:
        strategy = "ddp"
    devices = list(config.devices) if isinstance(config.devices, tuple) else config.devices
    return {"accelerator": config.accelerator, "devices": devices, "strategy": strategy,
            "precision": precision}


def train_paraphraser(triples: Sequence[Triple], spm_model_path: str | Path,
                      config: ParaphraserConfig | Mapping[str, Any] | None, out_dir: str | Path,
                      *, val_triples: Sequence[Triple] | None = None,
                      checkpoint_dir: str | Path | None = None) -> Path:
    """Train on ``(source, suggestion | None, target)`` triples; save to ``out_dir``.

    Without ``val_triples`` a seeded ``config.val_fraction`` of the sources is held out for
    the validation loss. With ``checkpoint_dir``, Lightning writes ``last.ckpt`` there every
    ``config.checkpoint_every_n_steps`` and a second call with the same run (config,
    SentencePiece model, triples) resumes from it, ending with the weights of a run never
    stopped (:mod:`models.resume`; exact in one process without loader workers). Returns
    ``out_dir`` (a directory :func:`load_paraphraser` reads).
    """
    if not isinstance(config, ParaphraserConfig):
        config = ParaphraserConfig.model_validate(dict(config or {}))
    triples = check_triples(triples)
    if not triples:
        raise ValueError("no training triples")
    if val_triples is None:
        train, val = split_triples(triples, config.val_fraction, config.seed)
    else:
        train, val = triples, check_triples(val_triples, "val_triples")
    out_dir = Path(out_dir)
    tokenizer = ParaphraseTokenizer(spm_model_path, lowercase=config.lowercase,
                                    max_len=config.max_len,
                                    copy_word_pieces=config.copy_word_pieces)

    import pytorch_lightning as pl  # only training needs Lightning (a slow import)

    from models.end_state import END_STATE_FILE, EndState, read_end_state
    from models.paraphraser.datamodule import ParaphraseDataModule
    from models.paraphraser.module import ParaphraserModule
    from models.spawned_quiet import QuietSpawnedProcesses
    hardware = resolve_hardware(config)
    resume_from, checkpointing = resume.checkpointing(
        None if checkpoint_dir is None else Path(checkpoint_dir), config.checkpoint_every_n_steps,
        lambda: resume.run_fingerprint(config, Path(spm_model_path), triples,
                                       {"hardware": hardware, "val": val}))
    was_deterministic = torch.are_deterministic_algorithms_enabled()
    was_warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    started = time.time()
    pl.seed_everything(config.seed, workers=True, verbose=False)
    module = ParaphraserModule(_model_config(config, tokenizer), config)
    data = ParaphraseDataModule(train, val, tokenizer, config.batch_size, config.copy_oov_rate,
                                config.seed, config.num_workers)
    try:
        with pinned_torch_threads(config.cpu_threads), quiet_lightning(), \
                tempfile.TemporaryDirectory(prefix="qastress-paraphraser-") as scratch:
            trainer = pl.Trainer(
                **hardware,
                max_steps=config.max_steps or -1,
                max_epochs=config.max_epochs if config.max_steps is None else -1,
                gradient_clip_val=config.grad_clip,
                deterministic=config.deterministic,
                logger=False, enable_checkpointing=bool(checkpointing),
                enable_progress_bar=False, enable_model_summary=False, num_sanity_val_steps=0,
                limit_val_batches=1.0 if val else 0,
                log_every_n_steps=config.log_every_n_steps, default_root_dir=scratch,
                callbacks=[EndState(Path(scratch) / END_STATE_FILE), QuietSpawnedProcesses(),
                           *checkpointing.get("callbacks", [])],
                plugins=checkpointing.get("plugins"),
            )
            trainer.fit(module, datamodule=data,
                        ckpt_path=str(resume_from) if resume_from else None)
            end = read_end_state(Path(scratch) / END_STATE_FILE)  # (ddp_spawn: not in trainer)
    finally:
        torch.use_deterministic_algorithms(was_deterministic, warn_only=was_warn_only)
    if trainer.is_global_zero:
        val_loss = trainer.callback_metrics.get("val_loss")
        training_args = {
            **config.model_dump(mode="json"),
            "resolved": {**hardware, "device": str(trainer.strategy.root_device)},
            "n_train_triples": len(train),
            "n_val_triples": len(val),
            "spm_model": str(spm_model_path),
            "spm_sha256": hashlib.sha256(tokenizer.model_proto).hexdigest(),
            "versions": {"torch": torch.__version__, "pytorch_lightning": pl.__version__,
                         "python": platform.python_version()},
        }
        trainer_state = {
            "global_step": end.get("global_step", trainer.global_step),
            "epochs": end.get("epochs", trainer.current_epoch),
            "train_seconds": round(time.time() - started, 3),
            "resumed_from": str(resume_from) if resume_from else None,
            "final_train_loss": _float(trainer.callback_metrics.get("train_loss")),
            "final_val_loss": _float(val_loss),
            "log_history": end.get("log_history", module.history),
        }
        model = module.model.to("cpu").float()
        Paraphraser(model, tokenizer).save_pretrained(out_dir, training_args, trainer_state)
    trainer.strategy.barrier()
    if checkpoint_dir is not None and trainer.is_global_zero:  # the paraphraser is saved
        resume.discard_checkpoints(Path(checkpoint_dir))
    return out_dir


def _float(value: Any) -> float | None:
    return None if value is None else float(value)
