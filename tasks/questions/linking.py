"""Entity linking of questions (paper §3: ELQ over the NQ training questions).

Two ways to get linked questions in the project's JSONL interchange ``{question, entities}``:

* :class:`AliasLinker`, offline: a dictionary from every entity's label and aliases
  (normalised: NFD without combining marks, case-folded, letter/digit tokens) to the entity.
  A question is scanned left to right; at each position the longest n-gram that is a name is
  linked and the scan continues after it. A name shared by several entities goes to the most
  popular one (hyperlink count, then the smaller id). Names made only of stop words or shorter
  than ``min_chars`` characters are not indexed.
* :func:`read_external_links`: an external linker's output already in the interchange (ELQ
  through :func:`elq_to_interchange`, or anything else); ids that are not Wikidata ids are
  mapped through the entities' labels when possible.

:func:`linking_scores` measures micro precision/recall of linked entity ids against a truth
file in the same interchange (the demo world knows which entities its questions are about).
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import regex

from tasks.io.atomic import write_json
from tasks.io.entity_labels import EntityLabel
from tasks.io.errors import DataFormatError, SkipCounter, handle, preview
from tasks.io.linking import LinkedQuestion, iter_linked_questions
from tasks.orchestration import artifact_task
from tasks.questions.facts import qid_order

log = logging.getLogger(__name__)
_TOKEN = regex.compile(r"[\p{L}\p{N}]+")
_QID = re.compile(r"Q\d+")
_STOPWORD_TEXT = """
a an and are as at be by did do does for from had has have he her his how i in is it its
me my of on or she that the their them they this to was we were what when where which who
whom whose why will with you your
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def normalise_tokens(text: str) -> tuple[str, ...]:
    """Letter/digit tokens of ``text``: NFD, combining marks dropped, case-folded."""
    decomposed = unicodedata.normalize("NFD", text)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return tuple(_TOKEN.findall(stripped.casefold()))


@dataclass(frozen=True, slots=True)
class Mention:
    """A linked span: token offsets ``[start, end)`` into the normalised question."""

    start: int
    end: int
    name: str
    entity_id: str


class AliasLinker:
    """Longest-match alias-dictionary linker (see the module docstring)."""

    def __init__(self, names: Mapping[tuple[str, ...], str]):
        self.names = dict(names)
        self.max_ngram = max((len(k) for k in self.names), default=0)

    @classmethod
    def from_entities(cls, entities: Iterable[EntityLabel], popularity: Mapping[str, int],
                      min_chars: int = 3, max_ngram: int = 10,
                      stopwords: frozenset[str] = STOPWORDS) -> AliasLinker:
        """Index the label and aliases of every entity; a shared name goes to the most popular."""
        best: dict[tuple[str, ...], tuple[int, tuple[int, str], str]] = {}
        for entity in entities:
            rank = (-int(popularity.get(entity.id, 0)), qid_order(entity.id))
            for name in entity.names:
                key = normalise_tokens(name)
                if (not key or len(key) > max_ngram or len("".join(key)) < min_chars
                        or all(token in stopwords for token in key)):
                    continue
                current = best.get(key)
                if current is None or (rank[0], rank[1]) < (current[0], current[1]):
                    best[key] = (rank[0], rank[1], entity.id)
        return cls({key: value[2] for key, value in best.items()})

    def mentions(self, question: str) -> list[Mention]:
        """Leftmost-longest matches of names in ``question``."""
        tokens = normalise_tokens(question)
        found: list[Mention] = []
        i = 0
        while i < len(tokens):
            for n in range(min(self.max_ngram, len(tokens) - i), 0, -1):
                key = tokens[i:i + n]
                entity = self.names.get(key)
                if entity is not None:
                    found.append(Mention(i, i + n, " ".join(key), entity))
                    i += n
                    break
            else:
                i += 1
        return found

    def link(self, question: str) -> LinkedQuestion:
        """The question with its linked entity ids (each once, in question order)."""
        ids = dict.fromkeys(m.entity_id for m in self.mentions(question))
        return LinkedQuestion(question, tuple(ids))

    def link_all(self, questions: Iterable[str]) -> Iterator[LinkedQuestion]:
        """:meth:`link` over many questions, in order."""
        for question in questions:
            yield self.link(question)


def title_index(entities: Iterable[EntityLabel]) -> dict[str, str]:
    """Label -> id for labels that name exactly one entity (used to map titles to ids)."""
    seen: dict[str, str | None] = {}
    for entity in entities:
        seen[entity.label] = None if entity.label in seen else entity.id
    return {label: qid for label, qid in seen.items() if qid is not None}


def read_external_links(path: Path, titles: Mapping[str, str] | None = None,
                        on_error: str = "raise",
                        skips: SkipCounter | None = None) -> list[LinkedQuestion]:
    """Linked questions from an external linker's JSONL interchange file.

    An entity that is not a ``Q`` id is looked up in ``titles`` (label -> id; underscores
    read as spaces); one that cannot be mapped is dropped and counted in ``skips``.
    """
    out: list[LinkedQuestion] = []
    for item in iter_linked_questions(path, on_error, skips):
        ids: list[str] = []
        for entity in item.entities:
            if _QID.fullmatch(entity):
                ids.append(entity)
                continue
            mapped = (titles or {}).get(entity) or (titles or {}).get(entity.replace("_", " "))
            if mapped:
                ids.append(mapped)
            elif skips is not None:
                skips.skip(DataFormatError(path, f"question {item.question!r}",
                                           "a Wikidata id or a known title", preview(entity)),
                           "entity not mapped to a Wikidata id")
        out.append(LinkedQuestion(item.question, tuple(dict.fromkeys(ids))))
    return out


def elq_to_interchange(elq_path: Path, out_path: Path, titles: Mapping[str, str],
                       on_error: str = "raise", skips: SkipCounter | None = None) -> int:
    """Convert ELQ's prediction lines (``text`` + ``pred_tuples_string``) to the interchange.

    ELQ writes one JSON object per question with ``pred_tuples_string`` = ``[[title, mention],
    ...]``; titles are mapped to Wikidata ids with ``titles``. A title ``titles`` does not know
    is kept as it is, so that :func:`read_external_links` (which maps titles again, with the
    study's own labels) counts it rather than this conversion dropping it. A line that is not
    such an object, or a tuple without a title, raises :class:`DataFormatError` naming the line
    (with ``on_error="skip"``: counted in ``skips``). Returns the number of lines written.
    """
    from tasks.io._jsonstream import iter_jsonl
    from tasks.io.linking import write_linked_questions

    items: list[LinkedQuestion] = []
    for lineno, value in iter_jsonl(elq_path, on_error, skips):
        tuples = value.get("pred_tuples_string", []) if isinstance(value, dict) else None
        if (not isinstance(value, dict) or not isinstance(value.get("text"), str)
                or not isinstance(tuples, list)
                or not all(isinstance(pair, list) and pair and isinstance(pair[0], str)
                           and pair[0] for pair in tuples)):
            handle(DataFormatError(elq_path, f"line {lineno}",
                                   'an ELQ prediction {"text", "pred_tuples_string": '
                                   '[[title, mention], ...]}', preview(value)), on_error, skips)
            continue
        ids = [titles.get(pair[0], pair[0]) for pair in tuples]
        items.append(LinkedQuestion(value["text"], tuple(dict.fromkeys(ids))))
    write_linked_questions(out_path, items)
    return len(items)


@dataclass(frozen=True, slots=True)
class LinkingScores:
    """Micro-averaged over (question, entity) pairs."""

    questions: int
    true_positives: int
    false_positives: int
    false_negatives: int

    @property
    def precision(self) -> float:
        predicted = self.true_positives + self.false_positives
        return self.true_positives / predicted if predicted else 0.0

    @property
    def recall(self) -> float:
        gold = self.true_positives + self.false_negatives
        return self.true_positives / gold if gold else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def to_dict(self) -> dict[str, float | int]:
        """Counts and percentages."""
        return {"questions": self.questions, "true_positives": self.true_positives,
                "false_positives": self.false_positives,
                "false_negatives": self.false_negatives,
                "precision": round(100 * self.precision, 2),
                "recall": round(100 * self.recall, 2), "f1": round(100 * self.f1, 2)}


def linking_scores(predicted: Sequence[LinkedQuestion],
                   truth: Sequence[LinkedQuestion]) -> LinkingScores:
    """Precision/recall of predicted entity ids against ``truth``, matched by question text.

    Repeated question texts are matched in order. Questions of the truth that were not
    linked at all count as predicted with no entity.
    """
    queue: dict[str, list[LinkedQuestion]] = defaultdict(list)
    for item in predicted:
        queue[item.question].append(item)
    tp = fp = fn = 0
    for gold in truth:
        candidates = queue.get(gold.question)
        guess = set(candidates.pop(0).entities) if candidates else set()
        want = set(gold.entities)
        tp += len(guess & want)
        fp += len(guess - want)
        fn += len(want - guess)
    return LinkingScores(len(truth), tp, fp, fn)


def linked_entity_counts(linked: Iterable[LinkedQuestion]) -> dict[str, int]:
    """How many questions link each entity."""
    counts: dict[str, int] = defaultdict(int)
    for item in linked:
        for entity in item.entities:
            counts[entity] += 1
    return dict(counts)


def write_linking_eval(path: Path, scores: LinkingScores | None, linker: str,
                       truth: str | None = None) -> dict:
    """The scores as JSON (``"scores": null`` when there was no truth to compare with)."""
    record = {"linker": linker, "truth": truth,
              "scores": scores.to_dict() if scores else None}
    write_json(path, record, indent=2)
    return record



def truth_from_positive_titles(examples: Iterable[tuple[str, str | None]],
                               titles: Mapping[str, str]) -> list[LinkedQuestion]:
    """Stand-in truth: the entity whose article holds the question's gold (first positive)
    passage. Questions whose title maps to no single entity are left out."""
    out = []
    for question, title in examples:
        qid = titles.get(title) if title else None
        if qid:
            out.append(LinkedQuestion(question, (qid,)))
    return out


def link_nq_step(nq_train: Path, entity_labels: Path, hyperlinks: Path, links_path: Path,
                 eval_path: Path, linker: str = "alias", linker_output: Path | None = None,
                 linker_truth: Path | None = None, hyperlink_key: str = "wikidata",
                 min_chars: int = 3, max_ngram: int = 10,
                 on_bad_record: str = "raise") -> dict:
    """Link the NQ training questions; write them (JSONL interchange) and the linker's scores.

    ``linker="alias"`` runs :class:`AliasLinker` over every entity of ``entity_labels`` (ties by
    hyperlink count); ``"external"`` reads ``linker_output``. Scores are measured against
    ``linker_truth`` when given, else against the entity of each question's gold passage title
    (the demo world's NQ passages are titled by their article's entity).
    """
    from tasks.io.dpr import iter_dpr_examples
    from tasks.io.entity_labels import iter_entity_labels
    from tasks.io.hyperlinks import read_hyperlink_counts
    from tasks.io.linking import write_linked_questions

    skips = SkipCounter(source="entity linking inputs")
    examples = [(ex.question, ex.positive_ctxs[0].title if ex.positive_ctxs else None)
                for ex in iter_dpr_examples(nq_train, on_bad_record, skips)]
    entities = list(iter_entity_labels(entity_labels, on_bad_record, skips))
    titles = title_index(entities)
    if linker == "external":
        if linker_output is None:
            raise ValueError("entity_questions.linker is 'external' but linker_output is unset")
        linked = read_external_links(Path(linker_output), titles, on_bad_record, skips)
    elif linker == "alias":
        counts = read_hyperlink_counts(hyperlinks, key=hyperlink_key,  # type: ignore[arg-type]
                                       on_error=on_bad_record, skips=skips)
        popularity = counts if hyperlink_key == "wikidata" else {
            titles[t]: c for t, c in counts.items() if t in titles}
        alias = AliasLinker.from_entities(entities, popularity, min_chars, max_ngram)
        linked = list(alias.link_all(question for question, _ in examples))
    else:
        raise ValueError(f"linker must be 'alias' or 'external', not {linker!r}")
    write_linked_questions(links_path, linked)
    if linker_truth is not None and Path(linker_truth).exists():
        truth = list(iter_linked_questions(linker_truth, on_bad_record, skips))
        truth_source = str(linker_truth)
    else:
        if linker_truth is not None:
            log.warning("linker truth %s does not exist: scoring against gold-passage titles",
                        linker_truth)
        truth = truth_from_positive_titles(examples, titles)
        truth_source = "gold-passage titles of the NQ training questions"
    scores = linking_scores(linked, truth) if truth else None
    record = write_linking_eval(eval_path, scores, linker, truth_source)
    entity_counts = linked_entity_counts(linked)
    return record | {"questions": len(linked),
                     "questions_with_entity": sum(bool(item.entities) for item in linked),
                     "distinct_entities": len(entity_counts), "skipped": skips.total}


link_nq_task = artifact_task(link_nq_step, outputs=("links_path", "eval_path"),
                             name="link entities in NQ training questions")
