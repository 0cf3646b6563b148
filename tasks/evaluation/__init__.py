"""Evaluation metrics that must agree exactly with the reference scripts.

- :mod:`tasks.evaluation.tokenizer`: DrQA/DPR ``SimpleTokenizer`` semantics.
- :mod:`tasks.evaluation.has_answer`: DPR/EntityQuestions answer matching ("has_answer"),
  with a batch API that tokenises every distinct passage once.
- :mod:`tasks.evaluation.topk`: top-k retrieval accuracy, macro average over relation files,
  paired bootstrap confidence intervals.
- :mod:`tasks.evaluation.squad_metrics`: SQuAD v1.1 exact match / F1 (``evaluate-v1.1.py``).
"""
