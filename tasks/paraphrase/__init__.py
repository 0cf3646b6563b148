"""Paraphrased question sets (Gan & Ng, 2019): PPDB suggestions, training triples for the
suggestion-guided paraphraser, its vocabulary, the similarity filter, the SQuAD-format test sets,
the human-evaluation round trip and the report. Each module is plain functions; the flow
``flows/paraphrase.py`` puts one-line cached tasks on top of them.
"""
