"""Training steps of the pipeline: masked-LM pre-training, DPR retriever training, metrics."""
