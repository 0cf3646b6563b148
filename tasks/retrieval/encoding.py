"""The encoding loop: token-length-sorted batches, tokenised ahead of the model.

Passages are encoded as DPR does: ``[CLS] title [SEP] text [SEP]`` through the tokenizer's pair
input (without a title: the text alone; without text: the title), truncated longest-first to
``max_length``, with all-zero segment ids (DPR's ``generate_dense_embeddings`` passes zeros).

:func:`encode_texts` sorts a window of texts by token length, encodes batches of similar length
(little padding), and writes each vector back to its text's position; under
``torch.inference_mode`` and, only on CUDA, an optional bf16 autocast. Vectors are float32
numpy arrays.

On CUDA the model would wait for the tokenizer (one H100 ran BERT-base 5x faster than one CPU
thread tokenised): a producer thread tokenises and pads the next batches (``prefetch`` of them,
in pinned memory) while the model runs, the copies to the device are ``non_blocking``, and the
fast tokenizer's own thread pool is switched on for the duration of the call
(``TOKENIZERS_PARALLELISM``, off elsewhere: processes forked after it was used would warn and
deadlock-guard). On CPU the default is no producer thread (it would take cores from the model);
``prefetch`` forces either path, and both give identical vectors.

The model runs with a fixed number of torch CPU threads (``cpu_threads``; ``None``: the
machine's count, :func:`models.threads.machine_cpu_threads`), never with whatever count the
calling process had set: vectors must not depend on what ran before in the process.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from models.threads import pinned_torch_threads
from tasks.retrieval.encoder_spec import Pooling

#: Texts tokenised and length-sorted together (bounds the memory of token lists).
SORT_WINDOW = 16_384
#: Batches tokenised ahead of the model on CUDA (the producer thread's queue).
CUDA_PREFETCH = 4

def _autocast(device: Any, bf16: bool) -> Any:
    import torch

    if bf16 and device.type == "cuda" and torch.cuda.is_available():
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def _pool(model: Any, input_ids: Any, attention_mask: Any, pooling: str) -> Any:
    """``pooler``: the model's pooler output (DPR); ``cls`` / ``mean``: as the bi-encoder
    trains (:func:`models.retriever.network.pool`), in float32."""
    from models.retriever.network import pool

    if pooling == "pooler":
        return model(input_ids=input_ids, attention_mask=attention_mask).pooler_output.float()
    if pooling not in ("cls", "mean"):
        raise ValueError(f"pooling must be 'cls', 'mean' or 'pooler', not {pooling!r}")
    hidden = model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    return pool(hidden, attention_mask, pooling)


def encode_texts(model: Any, tokenizer: Any, texts: Sequence[str], batch_size: int = 64,
                 max_length: int = 256, pooling: Pooling = "mean", device: Any = "cpu",
                 progress: bool = False, *, titles: Sequence[str] | None = None,
                 normalize: bool = False, bf16: bool = False, sort_by_length: bool = True,
                 label: str = "encode", prefetch: int | None = None,
                 cpu_threads: int | None = None,
                 token_ids: Sequence[Sequence[int]] | None = None) -> np.ndarray:
    """Encode ``texts`` (with ``titles`` as the first segment when given) into float32 vectors.

    Texts are tokenised once per window of :data:`SORT_WINDOW`, sorted by token length (longest
    first) and encoded in batches padded to their own longest text; each vector is written back
    to its text's row, so the order of the output is the order of ``texts``. ``prefetch``
    batches are tokenised ahead by a producer thread (default: :data:`CUDA_PREFETCH` on CUDA,
    0 = inline on CPU); the vectors do not depend on it. The model runs with ``cpu_threads``
    torch CPU threads (``None``: :func:`models.threads.machine_cpu_threads`), the caller's
    count restored afterwards. ``token_ids``: the texts' ids as
    :func:`models.retriever.data.tokenize_passages` gives them
    (e.g. from :mod:`tasks.retrieval.token_cache`), so that they are not tokenised again.
    """
    import torch

    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, not {batch_size}")
    device = torch.device(device) if isinstance(device, str) else device
    cuda = device.type == "cuda"
    ahead = (CUDA_PREFETCH if cuda else 0) if prefetch is None else max(0, prefetch)
    n = len(texts)
    if token_ids is not None and len(token_ids) != n:
        raise ValueError(f"{len(token_ids)} token id rows for {n} texts")
    batches = _batches(tokenizer, texts, titles, batch_size, max_length, sort_by_length,
                       pin=cuda and torch.cuda.is_available(), token_ids=token_ids)
    out: np.ndarray | None = None
    from rich.progress import Progress

    with Progress(disable=not progress, transient=True) as bar, \
            _tokenizer_parallelism(cuda), _prefetched(batches, ahead) as ready, \
            pinned_torch_threads(cpu_threads), torch.inference_mode(), _autocast(device, bf16):
        job = bar.add_task(label, total=n)
        for rows, input_ids, mask in ready:
            vectors = _pool(model, input_ids.to(device, non_blocking=cuda),
                            mask.to(device, non_blocking=cuda), pooling)
            if normalize:
                vectors = torch.nn.functional.normalize(vectors, p=2, dim=-1)
            result = vectors.cpu().numpy().astype(np.float32, copy=False)
            if out is None:
                out = np.empty((n, result.shape[1]), dtype=np.float32)
            out[rows] = result
            bar.advance(job, len(rows))
    if out is None:
        return np.empty((0, _output_dim(model)), dtype=np.float32)
    return out


def _batches(tokenizer: Any, texts: Sequence[str], titles: Sequence[str] | None,
             batch_size: int, max_length: int, sort_by_length: bool,
             pin: bool = False, token_ids: Sequence[Sequence[int]] | None = None
             ) -> Iterator[tuple[np.ndarray, Any, Any]]:
    """``(rows of texts, input_ids, attention_mask)`` per batch, as CPU tensors (pinned when
    ``pin``), window by window in length order (``token_ids``: given, not tokenised)."""
    import torch

    from models.retriever.data import tokenize_passages

    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    n = len(texts)
    for window in range(0, n, SORT_WINDOW):
        chunk = slice(window, min(n, window + SORT_WINDOW))
        ids = (token_ids[chunk] if token_ids is not None
               else tokenize_passages(tokenizer, texts[chunk],
                                      None if titles is None else titles[chunk], max_length))
        lengths = np.fromiter((len(row) for row in ids), dtype=np.int64, count=len(ids))
        order = np.argsort(-lengths, kind="stable") if sort_by_length else np.arange(len(ids))
        for start in range(0, len(order), batch_size):
            rows = order[start:start + batch_size]
            width = int(lengths[rows].max())
            input_ids = np.full((len(rows), width), pad_id, dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for j, row in enumerate(rows):
                length = lengths[row]
                input_ids[j, :length] = ids[row]
                mask[j, :length] = 1
            ids_t, mask_t = torch.from_numpy(input_ids), torch.from_numpy(mask)
            if pin:
                ids_t, mask_t = ids_t.pin_memory(), mask_t.pin_memory()
            yield window + rows, ids_t, mask_t


_DONE = object()


@contextlib.contextmanager
def _prefetched(items: Iterator[Any], ahead: int) -> Iterator[Iterator[Any]]:
    """``items`` produced by a thread up to ``ahead`` in advance (``ahead`` 0: inline). An
    exception of the producer is raised in the consumer; leaving early stops the producer."""
    if ahead <= 0:
        yield items
        return
    ready: queue.Queue = queue.Queue(maxsize=ahead)
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        ready.put(item, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            ready.put(_DONE)
        except BaseException as exc:  # noqa: BLE001  (handed to the consumer)
            ready.put(exc)

    def consume() -> Iterator[Any]:
        while True:
            item = ready.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    producer = threading.Thread(target=produce, name="encode-tokenizer", daemon=True)
    producer.start()
    try:
        yield consume()
    finally:
        stop.set()
        with contextlib.suppress(queue.Empty):
            while True:
                ready.get_nowait()  # unblock a producer waiting on a full queue
        producer.join(timeout=10)


_PARALLELISM_LOCK = threading.Lock()
_parallelism: dict[str, Any] = {"calls": 0, "before": None}


@contextlib.contextmanager
def _tokenizer_parallelism(enabled: bool) -> Iterator[None]:
    """``TOKENIZERS_PARALLELISM=true`` while CUDA encodings run (concurrent calls counted),
    then the previous value again; nothing on CPU."""
    if not enabled:
        yield
        return
    with _PARALLELISM_LOCK:
        if _parallelism["calls"] == 0:
            _parallelism["before"] = os.environ.get("TOKENIZERS_PARALLELISM")
            os.environ["TOKENIZERS_PARALLELISM"] = "true"
        _parallelism["calls"] += 1
    try:
        yield
    finally:
        with _PARALLELISM_LOCK:
            _parallelism["calls"] -= 1
            if _parallelism["calls"] == 0:
                before = _parallelism["before"]
                if before is None:
                    os.environ.pop("TOKENIZERS_PARALLELISM", None)
                else:
                    os.environ["TOKENIZERS_PARALLELISM"] = before


def _output_dim(model: Any) -> int:
    config = model.config
    projection = getattr(config, "projection_dim", 0) or 0
    return int(projection or config.hidden_size)


