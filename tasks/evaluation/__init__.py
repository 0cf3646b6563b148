"""Evaluation metrics that must agree exactly with the reference scripts.

- :mod:`tasks.evaluation.tokenizer`: DrQA/DPR ``SimpleTokenizer`` semantics.
- :mod:`tasks.evaluation.has_answer`: answer matching ("has_answer") in the modes of
  EntityQuestions (``eq-string``, ``eq-string-title``, ``title``) and DPR (``dpr-string``,
  ``dpr-string-title``, ``regex``), each exact.
- :mod:`tasks.evaluation.judge`: ``judge_run`` judges a whole run (first answer-bearing rank per
  question, has_answer flags of the written passages), each passage tokenised at most once.
- :mod:`tasks.evaluation.topk`: top-k retrieval accuracy, macro average over relation files,
  paired bootstrap confidence intervals.
- :mod:`tasks.evaluation.squad_metrics`: SQuAD v1.1 exact match / F1 (``evaluate-v1.1.py``).
"""
