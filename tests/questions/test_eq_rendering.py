"""Question rendering is exact against the real EntityQuestions release files."""

from __future__ import annotations

import json

import pytest

from tasks.io.entityquestions import discover_eq_files, eq_relation_of, read_eq_file
from tasks.questions.templates import load_templates, parse_subject, render_question


def test_dev_files_round_trip_through_templates(shared_data):
    dev = shared_data / "entityquestions" / "dev"
    files = discover_eq_files(dev, "dev")
    if not files:
        pytest.skip(f"no dev files under {dev}")
    checked = 0
    for relation, path in files.items():
        for item in read_eq_file(path):
            subject = parse_subject(relation, item.question)
            assert render_question(relation, subject) == item.question, (path, item.question)
            checked += 1
    assert checked >= 1000


def test_one_off_bucket_files_round_trip(shared_data):
    root = shared_data / "entityquestions" / "one-off"
    paths = sorted(root.glob("*/P*/bucket*.test.json"))
    if not paths:
        pytest.skip(f"no one-off bucket files under {root}")
    for path in paths:
        relation = eq_relation_of(path)
        for item in read_eq_file(path):
            assert render_question(relation, parse_subject(relation, item.question)) \
                == item.question


def test_packaged_templates_match_the_release_table(shared_data):
    release = json.loads((shared_data / "entityquestions" / "relation_query_templates.json")
                         .read_text(encoding="utf-8"))
    assert load_templates() == release


@pytest.mark.parametrize("relation,subject,question", [
    ("P19", "Arve Furset", "Where was Arve Furset born?"),
    ("P40", "Jürgen O'Neil", "Who is Jürgen O'Neil's child?"),
    ("P19_similar", "Ada [X] Lovelace", "What is the birthplace of Ada [X] Lovelace?"),
    ("P159", "Where Co.", "Where is the headquarter of Where Co.?"),
])
def test_render_parse_inverse_on_awkward_subjects(relation, subject, question):
    assert render_question(relation, subject) == question
    assert parse_subject(relation, question) == subject
