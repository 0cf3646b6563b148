"""Per-relation question templates of EntityQuestions (``[X]`` stands for the subject)."""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources

PLACEHOLDER = "[X]"


@cache
def load_templates() -> dict[str, str]:
    """Relation id (``P19``, ``P19_similar``, ...) -> template, from the packaged release table."""
    text = resources.files("tasks.questions").joinpath("relation_query_templates.json").read_text(
        encoding="utf-8"
    )
    return json.loads(text)


def render_question(relation: str, subject: str) -> str:
    """The question for ``subject`` under ``relation``'s template, exactly as the release has it."""
    templates = load_templates()
    if relation not in templates:
        raise KeyError(f"no question template for relation {relation!r}")
    return templates[relation].replace(PLACEHOLDER, subject)


@cache
def _template_regex(relation: str) -> re.Pattern[str]:
    before, after = load_templates()[relation].split(PLACEHOLDER)
    return re.compile(re.escape(before) + "(?P<subject>.+)" + re.escape(after) + r"\Z", re.DOTALL)


def parse_subject(relation: str, question: str) -> str:
    """Inverse of :func:`render_question`: the subject string inside ``question``."""
    match = _template_regex(relation).match(question)
    if match is None:
        raise ValueError(
            f"question {question!r} does not follow the {relation} template "
            f"{load_templates()[relation]!r}"
        )
    return match.group("subject")
