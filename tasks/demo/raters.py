"""The paper's human evaluation played by the demo world's own truth (demo world only).

Gan & Ng (2019, §4) had two raters score every (original, paraphrase) pair for semantic
equivalence and fluency on a 5-point scale and kept the pairs both rate 4 or 5 on both. On the
demo world the world itself knows what a question asks: each SQuAD-style question is a phrasing
of its question bank with a subject's name in it, and the question grammar
(:mod:`tasks.demo.question_grammar`, read by :mod:`tasks.demo.question_parser`) holds every
fluent phrasing of each relation or question type. The world raters fill the same rating form
real raters fill (:func:`tasks.paraphrase.human_eval.export_form`); the form is then read
back by the same :func:`~tasks.paraphrase.human_eval.import_ratings`. The reader-augmentation
flow can ask the same raters about its paraphrased training questions
(:func:`rate_candidates`, ``readers.augmentation.world_raters``), which the paper did not rate;
they read those with the grammar of the whole training set
(:func:`~tasks.demo.question_parser.training_grammar`), which also holds the questions about the
contexts' distractor sentences.

How a world rater scores a pair (the original is read by the grammar: its key and subject):

semantic equivalence
    5: the paraphrase is a phrasing of the original's key with the subject's name intact (its
    tokens, exactly once); 1: the name is missing, altered or repeated, or the paraphrase is a
    phrasing of another key (a different question); otherwise, with the name intact: 4 when
    every content word belongs to the key's phrasings and one is a cue of the key (a word at
    most :data:`~tasks.demo.question_parser.CUE_MAX_KEYS` keys use), 3 when the words fit but
    no cue is left, 2 when a word foreign to the key's phrasings is in it.
fluency
    5: a sentence of the world's grammar (any key). Otherwise by the share of its bigrams
    (sentence start and end included) the grammar uses: the **strict** rater gives 3 when all
    are attested (grammatical pieces, not a sentence the world says), 2 from 75 %, else 1; the
    **lenient** rater gives 4 when all are attested and no word is doubled, 3 from 75 %, 2
    from 50 %, else 1.

A relative clause of the grammar for the key's subjects (:func:`tasks.demo.question_grammar.
key_clauses`: "who ..." for people, "which ..." for the others) set off by commas right after
the subject ("Where was Lopez, who spent a long holiday, born?") is read as a description: the
pair is rated without it, semantic equivalence at most 4 (the question is the same; the
paraphrase says more about its subject). Those clauses are the phrases of the contexts'
distractor sentences that Gan & Ng's adversarial paraphrases insert. Any other added words are
foreign words (semantic 2).

The first rater (A) is strict and the second (B) lenient (then alternately): they disagree on
paraphrases that recombine pieces of the grammar into a sentence it does not hold, which the
lenient rater accepts when the meaning is kept and the strict one rejects.
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from tasks.demo.question_parser import SUBJECT, QuestionGrammar, training_grammar, with_subject
from tasks.io.atomic import atomic_write
from tasks.io.errors import DataFormatError
from tasks.io.tables import read_table, write_table
from tasks.orchestration import artifact_task
from tasks.paraphrase.human_eval import FORM_COLUMNS, INSTRUCTIONS
from tasks.paraphrase.text import is_word, load_stopwords, tokenize

Rating = tuple[int, int]  # (semantic_equivalence, fluency)
#: The highest semantic rating of a paraphrase that elaborates the subject with a clause: it
#: asks the same, with a description the original does not give.
ELABORATED_SEMANTIC = 4


def _semantic(grammar: QuestionGrammar, key: str, template: tuple[str, ...],
              occurrences: int) -> int:
    if occurrences != 1:
        return 1
    if template in grammar.languages.get(key, ()):
        return 5
    if grammar.keys_of(template):
        return 1
    stopwords = load_stopwords()
    content = {t for t in template if t != SUBJECT and is_word(t) and t not in stopwords}
    vocabulary = grammar.vocabulary.get(key, frozenset())
    if not content or not content <= vocabulary:
        return 2
    return 4 if content & grammar.cues.get(key, frozenset()) else 3


def _fluency(grammar: QuestionGrammar, template: tuple[str, ...], lenient: bool) -> int:
    if template in grammar.all_templates:
        return 5
    share = grammar.attested_share(template)
    if not lenient:
        return 3 if share == 1.0 else 2 if share >= 0.75 else 1
    doubled = any(a == b for a, b in zip(template, template[1:], strict=False))
    if share == 1.0 and not doubled:
        return 4
    return 3 if share >= 0.75 else 2 if share >= 0.5 else 1


def rate(grammar: QuestionGrammar, original: str, paraphrase: str, lenient: bool) -> Rating:
    """``(semantic_equivalence, fluency)`` of one pair by a strict or lenient world rater.

    An original the grammar cannot read is no question of the world: a ``ValueError`` naming it.
    """
    parses = grammar.parse(original)
    if not parses:
        raise ValueError(f"world raters: the original question {original!r} is no phrasing of "
                         "the demo world's question grammar (tasks/demo/data/questions.json, "
                         "question_grammar.json): is this the demo world's SQuAD dev set?")
    tokens = tokenize(paraphrase)
    best: Rating | None = None
    for parse in parses:
        template, occurrences = with_subject(tokens, parse.subject)
        template, elaborated = grammar.without_clause(parse.key, template)
        semantic = _semantic(grammar, parse.key, template, occurrences)
        rating = (min(semantic, ELABORATED_SEMANTIC) if elaborated else semantic,
                  _fluency(grammar, template, lenient))
        best = rating if best is None else max(best, rating)
    assert best is not None
    return best


def rate_form(form_path: Path, out_csv: Path, raters: Sequence[str] = ("A", "B"),
              min_rating: int = 4, grammar: QuestionGrammar | None = None) -> dict[str, Any]:
    """Fill a rating form (:func:`~tasks.paraphrase.human_eval.export_form`) as the world raters;
    write it to ``out_csv`` (the form's columns); return per-rater counts.

    ``raters`` gives the order: even positions are strict, odd ones lenient; a rater accepts a
    pair it rates ``>= min_rating`` on both scales. A row whose rater
    is not in ``raters`` is a :class:`~tasks.io.errors.DataFormatError` naming the line.
    """
    grammar = QuestionGrammar() if grammar is None else grammar
    lenient = {name: i % 2 == 1 for i, name in enumerate(raters)}
    with open(form_path, encoding="utf-8", newline="") as stream:
        lines = [line for line in stream if not line.startswith("#")]
    rows = list(csv.DictReader(lines))
    accepted: Counter[str] = Counter()
    rated: Counter[str] = Counter()
    with atomic_write(out_csv, newline="") as out:
        out.write(f"# {INSTRUCTIONS} Rated by the demo world's truth "
                  "(tasks/demo/raters.py).\n")
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(FORM_COLUMNS)
        for number, row in enumerate(rows, start=3):
            rater = row.get("rater", "")
            if rater not in lenient:
                raise DataFormatError(form_path, f"line {number}", f"a rater in {list(raters)}",
                                      repr(rater))
            semantic, fluency = rate(grammar, row["original"], row["paraphrase"],
                                     lenient[rater])
            rated[rater] += 1
            accepted[rater] += semantic >= min_rating and fluency >= min_rating
            writer.writerow([row["pair_id"], rater, row["original"], row["paraphrase"],
                             semantic, fluency])
    return {"rows": len(rows),
            **{f"accepted_by_{r}": accepted[r] for r in raters},
            **{f"acceptance_rate_{r}": accepted[r] / rated[r] if rated[r] else None
               for r in raters},
            "strict_raters": ",".join(r for r in raters if not lenient[r]),
            "lenient_raters": ",".join(r for r in raters if lenient[r])}


#: ``world_verdict`` of a candidate (:func:`rate_candidates`).
VERDICTS = ("below_bar", "accepted", "rejected", "outside_grammar")


def rate_candidates(scored_path: Path, out_path: Path, keep_column: str,
                    raters: Sequence[str] = ("A", "B"), min_rating: int = 4,
                    grammar: QuestionGrammar | None = None) -> dict[str, Any]:
    """Rate scored paraphrase candidates (``qid``, ``question``, ``paraphrase`` and a
    ``keep_column`` flag) as the world raters, write them with the ratings to ``out_path``
    (Parquet, atomically); return the counts.

    Only the rows whose ``keep_column`` is true (above the similarity bar) are rated, and only
    where ``grammar`` reads the original (default: :func:`~tasks.demo.question_parser.
    training_grammar`, which holds every question of the SQuAD-style training set, those
    about the contexts' distractor sentences included; until Session 21 the raters read with
    the test sets' grammar, and 25 of the 38 clause questions the adversarial augmentation
    added in Session 20 were unjudged word salad on distractor questions). Added columns, per
    rater ``r`` in
    ``raters`` (even positions strict, odd ones lenient, as :func:`rate_form`): ``semantic_<r>``
    and ``fluency_<r>`` (null for rows not rated); ``world_verdict`` (:data:`VERDICTS`:
    ``accepted`` when every rater rates ``>= min_rating`` on both scales); ``world_keep``: above
    the bar and not rejected (the raters decide where they can judge; elsewhere the bar alone
    does, as in the paper).
    """
    grammar = training_grammar() if grammar is None else grammar
    table = read_table(scored_path)
    for column in ("qid", "question", "paraphrase", keep_column):
        if column not in table.column_names:
            raise ValueError(f"{scored_path}: no column {column!r} (columns: "
                             f"{table.column_names}); expected scored paraphrase candidates")
    rows = table.to_pylist()
    accepted_by: Counter[str] = Counter()
    verdicts: Counter[str] = Counter()
    for row in rows:
        ratings: dict[str, Rating | None] = dict.fromkeys(raters)
        if not row[keep_column]:
            verdict = "below_bar"
        elif not grammar.parse(row["question"]):
            verdict = "outside_grammar"
        else:
            accepts = []
            for k, name in enumerate(raters):
                rating = rate(grammar, row["question"], row["paraphrase"], k % 2 == 1)
                ratings[name] = rating
                accepts.append(min(rating) >= min_rating)
                accepted_by[name] += accepts[-1]
            verdict = "accepted" if all(accepts) else "rejected"
        verdicts[verdict] += 1
        for name, rating in ratings.items():
            row[f"semantic_{name}"] = rating[0] if rating else None
            row[f"fluency_{name}"] = rating[1] if rating else None
        row["world_verdict"] = verdict
        row["world_keep"] = verdict in ("accepted", "outside_grammar")
    schema = table.schema
    for name in raters:
        schema = schema.append(pa.field(f"semantic_{name}", pa.int64()))
        schema = schema.append(pa.field(f"fluency_{name}", pa.int64()))
    schema = schema.append(pa.field("world_verdict", pa.string()))
    write_table(out_path, rows, schema=schema.append(pa.field("world_keep", pa.bool_())))
    rated = verdicts["accepted"] + verdicts["rejected"]
    return {"candidates": len(rows), **{v: verdicts[v] for v in VERDICTS}, "rated": rated,
            "acceptance_rate": verdicts["accepted"] / rated if rated else None,
            **{f"accepted_by_{name}": accepted_by[name] for name in raters}}


world_rating_task = artifact_task(rate_form, outputs=("out_csv",), name="world raters")
world_rated_candidates_task = artifact_task(rate_candidates, outputs=("out_path",),
                                            name="world raters: candidates")
