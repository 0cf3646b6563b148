"""Expected scores, as Pyserini's regressions keep them: every number of ``metrics/*.json``
for a profile, in ``tasks/scores/expected/<profile>.yaml``, and a check that classifies each
number as equal / within tolerance / regressed and lists missing and new ones
(``qastress check-scores``).
"""
