"""Prefect flows of qastress: one module per box of the study's DAG.

Importing any flow goes through :mod:`tasks`, which switches off telemetry first.
"""

import tasks  # noqa: F401  (sets offline/telemetry environment before Prefect is imported)
