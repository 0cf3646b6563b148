"""The EntityQuestions release table of question templates, per relation (configuration layer).

``relation_query_templates.json`` (next to this module) is the release's table: relation id
(``P19``, ``P19_similar``, ...) -> template with ``[X]`` for the subject. The configuration
validates ``entity_questions.relations`` against it; :mod:`tasks.questions.templates` renders
and parses questions with it.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

TEMPLATES_FILE = "relation_query_templates.json"


@cache
def load_templates() -> dict[str, str]:
    """Relation id (``P19``, ``P19_similar``, ...) -> template, from the packaged release table."""
    text = resources.files("tasks").joinpath(TEMPLATES_FILE).read_text(encoding="utf-8")
    return json.loads(text)
