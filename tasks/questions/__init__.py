"""EntityQuestions from knowledge-base facts: facts per relation, templates, subject-frequency
buckets, entities seen in NQ training questions, train/dev/test splits (with the no-overlap and
``_similar`` sets), DPR training JSON and the release-format question files."""
