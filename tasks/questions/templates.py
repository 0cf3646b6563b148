"""Per-relation question templates of EntityQuestions (``[X]`` stands for the subject)."""

from __future__ import annotations

import re
from functools import cache

from tasks.relation_templates import load_templates

__all__ = ["PLACEHOLDER", "load_templates", "parse_subject", "render_question"]

PLACEHOLDER = "[X]"


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
