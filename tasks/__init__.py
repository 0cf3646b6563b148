"""qastress tasks: plain functions doing the work, with thin Prefect ``@task`` wrappers.

Telemetry that would try to reach the internet is switched off before Prefect is imported, and
Prefect's temporary API gets a start-up timeout that survives a busy machine.
"""

import os

#: Seconds a temporary Prefect API may take to start: ``orchestration.api_startup_timeout_s``
#: (params.yaml) and Prefect's own fallback. Prefect's default, 20, is too short on a busy
#: 2-core machine (the server alone needs 7-30 s there).
API_STARTUP_TIMEOUT_S = 180

os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS",
                      str(API_STARTUP_TIMEOUT_S))
