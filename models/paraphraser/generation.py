"""Greedy and beam-search decoding for :class:`PointerGeneratorTransformer` (batched, cached).

Beam search follows the usual conventions (those of ``transformers``' beam search): the
``2 * beam`` best continuations are examined per example, ``</s>`` among the first ``beam``
closes a hypothesis whose score is ``sum log p / length ** length_penalty`` (length counts the
generated tokens including ``</s>``), and an example is done when it has ``beam`` finished
hypotheses and the best open one cannot beat the worst finished one at the current length.
With ``beam = 1`` this is exactly greedy decoding.

Both can block *doubled tokens* (``Batch.doubled`` not ``None``): a row never generates the token
it has just generated, unless the example's input has that token doubled itself (a name such
as "Bora Bora", written by the decoder as one copy unit twice). A pointer-generator decoder
repeats itself (See et al., 2017); a doubled word ("what is hölzl hölzl founded by?") is the
commonest such slip on short questions; no phrasing of the demo world's question grammar
repeats a word.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from models.paraphraser.network import PointerGeneratorTransformer, reorder_caches, reorder_state


@dataclass
class Batch:
    """Encoder inputs of a batch of examples (right-padded)."""

    src_ids: Tensor
    src_ext: Tensor
    src_mask: Tensor
    n_oov: int
    #: per example, the ids its input has doubled (allowed to repeat); None: no blocking
    doubled: list[frozenset[int]] | None = None


def _banned_repeats(tokens: Tensor, examples: list[int],
                    doubled: list[frozenset[int]] | None) -> Tensor | None:
    """Per row, the id it may not generate next (its last token) or -1; None: no blocking.

    ``examples[r]`` is the example of row ``r``.
    """
    if doubled is None:
        return None
    banned = tokens[:, -1].clone()
    for row, example in enumerate(examples):
        if doubled[example] and int(banned[row]) in doubled[example]:
            banned[row] = -1
    return banned


def _step_log_probs(model: PointerGeneratorTransformer, state, caches, tokens: Tensor,
                    src_ext: Tensor, n_oov: int, blocked: Tensor, step: int,
                    min_len: int, eos_id: int, banned: Tensor | None = None) -> Tensor:
    log_probs = model.decode(state, tokens[:, -1:], src_ext, n_oov, caches, offset=step)[:, -1]
    log_probs[:, blocked] = float("-inf")
    if banned is not None:
        rows = (banned >= 0).nonzero(as_tuple=True)[0]
        log_probs[rows, banned[rows]] = float("-inf")
    if step < min_len:
        log_probs[:, eos_id] = float("-inf")
    return log_probs


def greedy_search(model: PointerGeneratorTransformer, batch: Batch, max_len: int,
                  blocked: Tensor, min_len: int = 1) -> list[list[int]]:
    """Argmax decoding; returns the generated ids of each example (without ``</s>``)."""
    cfg = model.cfg
    b = batch.src_ids.shape[0]
    state = model.encode(batch.src_ids, batch.src_mask)
    caches: list[dict[str, Tensor]] = [{} for _ in model.decoder]
    tokens = torch.full((b, 1), cfg.bos_id, dtype=torch.long, device=batch.src_ids.device)
    done = torch.zeros(b, dtype=torch.bool, device=tokens.device)
    examples = list(range(b))  # one row per example
    for step in range(max_len):
        log_probs = _step_log_probs(model, state, caches, tokens, src_ext=batch.src_ext,
                                    n_oov=batch.n_oov, blocked=blocked, step=step,
                                    min_len=min_len, eos_id=cfg.eos_id,
                                    banned=_banned_repeats(tokens, examples, batch.doubled))
        nxt = log_probs.argmax(dim=-1)
        nxt = nxt.masked_fill(done, cfg.pad_id)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == cfg.eos_id
        if bool(done.all()):
            break
    out = []
    for row in tokens[:, 1:].tolist():
        ids = []
        for i in row:
            if i in (cfg.eos_id, cfg.pad_id):
                break
            ids.append(i)
        out.append(ids)
    return out


def beam_search(model: PointerGeneratorTransformer, batch: Batch, beam: int, max_len: int,
                blocked: Tensor, length_penalty: float = 1.0,
                min_len: int = 1) -> list[list[int]]:
    """Batched beam search with length normalisation; best hypothesis per example.

    Examples that are done leave the batch (their rows are dropped from the caches), so a
    batch costs what its longest paraphrases cost, not ``max_len`` steps for every row.
    """
    cfg = model.cfg
    device = batch.src_ids.device
    n_examples = batch.src_ids.shape[0]
    expand = torch.arange(n_examples, device=device).repeat_interleave(beam)
    state = reorder_state(model.encode(batch.src_ids, batch.src_mask), expand)
    src_ext = batch.src_ext.index_select(0, expand)
    caches: list[dict[str, Tensor]] = [{} for _ in model.decoder]
    tokens = torch.full((n_examples * beam, 1), cfg.bos_id, dtype=torch.long, device=device)
    scores = torch.full((n_examples, beam), float("-inf"), device=device)
    scores[:, 0] = 0.0
    finished: list[list[tuple[float, list[int]]]] = [[] for _ in range(n_examples)]
    active = list(range(n_examples))  # example id of each row group still decoding

    def norm(score: float, length: int) -> float:
        return score / (length ** length_penalty)

    for step in range(max_len):
        b = len(active)
        banned = _banned_repeats(tokens, [example for example in active for _ in range(beam)],
                                 batch.doubled)
        log_probs = _step_log_probs(model, state, caches, tokens, src_ext=src_ext,
                                    n_oov=batch.n_oov, blocked=blocked, step=step,
                                    min_len=min_len, eos_id=cfg.eos_id, banned=banned)
        vocab = log_probs.shape[-1]
        cand = log_probs.add_(scores.view(-1, 1)).view(b, beam * vocab)
        top_scores, top_ids = cand.topk(2 * beam, dim=1)
        top_scores_l, top_ids_l = top_scores.tolist(), top_ids.tolist()
        history = tokens[:, 1:].tolist()
        length = step + 1
        keep: list[int] = []
        next_scores: list[float] = []
        next_tokens: list[int] = []
        next_rows: list[int] = []
        for i, example in enumerate(active):
            hyps = finished[example]
            slots: list[tuple[float, int, int]] = []
            for rank, (score, flat) in enumerate(zip(top_scores_l[i], top_ids_l[i],
                                                     strict=True)):
                if score == float("-inf"):
                    break
                row, token = divmod(flat, vocab)
                if token == cfg.eos_id:
                    if rank < beam:
                        hyps.append((norm(score, length), history[i * beam + row]))
                    continue
                slots.append((score, token, i * beam + row))
                if len(slots) == beam:
                    break
            hyps.sort(key=lambda item: -item[0])
            del hyps[beam:]
            if not slots or (len(hyps) >= beam and hyps[-1][0] >= norm(slots[0][0], length)):
                continue  # done
            if step == max_len - 1:  # out of steps: open hypotheses compete as they are
                hyps.extend((norm(score, length), history[row] + [token])
                            for score, token, row in slots)
                hyps.sort(key=lambda item: -item[0])
                continue
            while len(slots) < beam:  # pad with dead beams
                slots.append((float("-inf"), cfg.pad_id, i * beam))
            keep.append(i)
            for score, token, row in slots:
                next_scores.append(score)
                next_tokens.append(token)
                next_rows.append(row)
        if not keep:
            break
        rows = torch.tensor(next_rows, device=device)
        if len(keep) < b:  # drop finished examples from every per-row tensor
            groups = torch.tensor([i * beam + j for i in keep for j in range(beam)],
                                  device=device)
            state = reorder_state(state, groups)
            src_ext = src_ext.index_select(0, groups)
            active = [active[i] for i in keep]
        tokens = torch.cat([tokens.index_select(0, rows),
                            torch.tensor(next_tokens, device=device).view(-1, 1)], dim=1)
        reorder_caches(caches, rows)
        scores = torch.tensor(next_scores, device=device).view(len(keep), beam)
    return [hyps[0][1] if hyps else [] for hyps in finished]
