"""Search a passage index with a question encoder trained against its frozen passage encoder.

A DPR pair fine-tuned with the passage encoder frozen (``freeze: onlyQ``; Table 2's onlyQ,
Table 4's specialised question encoders) keeps the baseline's passage vectors, so the
baseline's FAISS index serves it: no re-encoding. The index refuses queries of another
encoder fingerprint (:meth:`tasks.retrieval.faiss_index.DenseIndex.check_queries`), and the
fingerprint covers both encoders; :func:`check_frozen_passage_encoder` proves instead that the
passage side is the index's, file for file (weights, config, tokenizer), and only then are the
question vectors searched under the index's fingerprint.
"""

from __future__ import annotations

from pathlib import Path

from tasks.io.trec import write_trec_run
from tasks.orchestration import artifact_task
from tasks.retrieval.dense_encoding import run_tag
from tasks.retrieval.encoders import (
    Embeddings,
    EncoderSpec,
    encode_questions,
    model_dir_fingerprint,
)
from tasks.retrieval.faiss_index import dense_search, read_index_manifest
from tasks.retrieval.query_sets import read_query_set


def check_frozen_passage_encoder(spec: EncoderSpec, index_spec: EncoderSpec) -> None:
    """Raise unless ``spec``'s passage encoder is ``index_spec``'s, bit for bit, with the same
    pooling, length and normalisation (then ``spec``'s questions may search its index)."""
    settings = ("kind", "pooling", "max_length", "normalize")
    differing = [f"{name}: {getattr(spec, name)!r} vs {getattr(index_spec, name)!r}"
                 for name in settings if getattr(spec, name) != getattr(index_spec, name)]
    if differing:
        raise ValueError(f"{spec.describe()} cannot search the index of {index_spec.describe()}:"
                         f" {'; '.join(differing)}")
    ours, theirs = (model_dir_fingerprint(Path(s.ctx_model)) for s in (spec, index_spec))
    if ours != theirs:
        raise ValueError(f"{spec.ctx_model}: the passage encoder of {spec.describe()} differs "
                         f"from {index_spec.ctx_model} (the index's; fingerprints {ours[:12]} vs "
                         f"{theirs[:12]}): it was not frozen, so re-encode the passages")


def retrieve_frozen_index(index_dir: Path, queries: Path, run_path: Path, spec: EncoderSpec,
                          index_spec: EncoderSpec, k: int = 100, batch_size: int = 64,
                          device: str = "auto", bf16: bool = False,
                          cpu_threads: int | None = None) -> Path:
    """Encode a query-set file's questions with ``spec`` (``cpu_threads`` torch CPU threads,
    None: the machine's count) and search ``index_dir`` (built with ``index_spec``) -> one
    TREC run; an error unless the passage encoders are identical."""
    check_frozen_passage_encoder(spec, index_spec)
    manifest = read_index_manifest(index_dir)
    if manifest["model_fingerprint"] != index_spec.fingerprint:
        raise ValueError(f"{index_dir}: built with fingerprint "
                         f"{manifest['model_fingerprint'][:12]}, not {index_spec.describe()}")
    query_set = read_query_set(queries)
    encoded = encode_questions(spec, query_set.texts, query_set.qids, batch_size=batch_size,
                               device=device, bf16=bf16, cpu_threads=cpu_threads)
    searchable = Embeddings(encoded.vectors, encoded.ids, index_spec.name,
                            index_spec.fingerprint)
    write_trec_run(run_path, dense_search(index_dir, searchable, k),
                   tag=run_tag("dense", spec.name))
    return Path(run_path)


retrieve_frozen_index_task = artifact_task(retrieve_frozen_index, outputs=("run_path",),
                                           name="retrieve dense (frozen passage index)")
