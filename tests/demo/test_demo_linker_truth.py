"""The demo world writes who each NQ training question is about, so linkers can be scored."""

from __future__ import annotations

from tasks.io.dpr import iter_dpr_examples
from tasks.io.entity_labels import read_entity_labels
from tasks.io.hyperlinks import read_hyperlink_counts
from tasks.io.linking import iter_linked_questions
from tasks.questions.linking import AliasLinker, linking_scores


def test_nq_truth_names_the_subject_of_every_training_question(smoke_world):
    raw = smoke_world.paths.raw
    truth = list(iter_linked_questions(raw / "nq" / "nq-train.entities.jsonl"))
    questions = [e.question for e in iter_dpr_examples(smoke_world.raw_path("nq_train"))]
    assert [t.question for t in truth] == questions
    labels = read_entity_labels(smoke_world.raw_path("entity_labels"))
    for item in truth:
        (subject,) = item.entities
        names = [labels[subject].label, *labels[subject].aliases]
        assert any(name.lower() in item.question for name in names), item


def test_alias_linker_is_scored_against_the_known_truth(smoke_world):
    raw = smoke_world.paths.raw
    truth = list(iter_linked_questions(raw / "nq" / "nq-train.entities.jsonl"))
    labels = read_entity_labels(smoke_world.raw_path("entity_labels"))
    linker = AliasLinker.from_entities(labels.values(),
                                       read_hyperlink_counts(smoke_world.raw_path(
                                           "hyperlink_counts")))
    scores = linking_scores(list(linker.link_all(t.question for t in truth)), truth)
    assert scores.recall > 0.8
    assert scores.precision > 0.5
