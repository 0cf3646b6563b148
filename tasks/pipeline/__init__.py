"""The study's DAG declared once (:mod:`tasks.pipeline.stages`) and the files made from it.

``dvc.yaml`` and ``prefect.yaml`` are generated (``qastress dag write``; ``qastress dag check``
fails when the committed files differ); every stage's code dependencies are derived from the
imports of its flow module (:mod:`tasks.pipeline.code_deps`). Nothing here imports Prefect.
"""
