"""Cached Prefect tasks of retriever training (one line each over tasks.training.retriever).

``train_dpr_task`` takes its ``checkpoint_dir`` as a string: the Lightning checkpoints change
while it runs and must not be part of the cache key (a file input is hashed by content).
"""

from __future__ import annotations

from tasks.orchestration import artifact_task
from tasks.training.retriever import pretrain_small_bert, train_dpr, write_training_metrics

pretrain_mlm_task = artifact_task(pretrain_small_bert, outputs=("out_dir",),
                                  name="pre-train small BERT (MLM)")
train_dpr_task = artifact_task(train_dpr, outputs=("out_dir",),
                               name="train DPR bi-encoder")
training_metrics_task = artifact_task(write_training_metrics, outputs=("path",),
                                      name="retriever training metrics")
