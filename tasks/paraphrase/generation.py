"""Paraphrase generation: the interface between the pipeline and a paraphraser.

A paraphraser is anything with ``generate(inputs, beam_size) -> list[str]`` where ``inputs``
are ``(suggestion | None, question)`` pairs (:class:`Paraphraser`). Two are provided:

* ``neural``: the suggestion-guided transformer with a copy mechanism of
  :mod:`models.paraphraser`, trained on the training triples with the SentencePiece vocabulary
  (:func:`train_paraphraser_model`, :func:`load_generator`);
* ``ppdb_substitution``: a non-neural baseline that writes the suggestion in place of the
  question n-gram it paraphrases in PPDB (:class:`PPDBSubstitution`); it needs no training, so
  it also serves to check the rest of the pipeline quickly.

:func:`generate_candidates` paraphrases every question of the suggestions table once per
suggestion (and once without one), and keeps each distinct paraphrase that differs from its
question, with the counts of what was dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

import pyarrow as pa

from tasks.io.tables import read_table, write_table
from tasks.paraphrase.ppdb_lookup import PPDBTable
from tasks.paraphrase.suggestions import candidate_phrases
from tasks.paraphrase.text import NONE_TOKEN, load_stopwords, normalise_question, tokenize
from tasks.paraphrase.training_data import read_triples
from tasks.paraphrase.vocab import vocab_model_path

GeneratorKind = Literal["neural", "ppdb_substitution"]
# what :func:`generate_candidates` counts, in its report's order
COUNT_KEYS = ("inputs", "empty", "unchanged", "duplicates", "candidates", "suggestion_in_output",
              "questions", "questions_with_candidates")
Input = tuple[str | None, str]

CANDIDATES_SCHEMA = pa.schema([
    ("qid", pa.string()), ("question", pa.string()), ("source", pa.string()),
    ("rank", pa.int32()), ("phrase", pa.string()), ("suggestion", pa.string()),
    ("score", pa.float64()), ("paraphrase", pa.string()),
])
_NO_SPACE_BEFORE = re.compile(r" (?=[?.,!;:)\]}%]|'s\b|'re\b|'ve\b|'ll\b|'d\b|'m\b|n't\b)")
_NO_SPACE_AFTER = re.compile(r"(?<=[(\[{$]) ")


class Paraphraser(Protocol):
    """What the pipeline needs of a paraphraser."""

    def generate(self, inputs: Sequence[Input], beam_size: int | None = None) -> list[str]: ...


def join_tokens(tokens: Sequence[str]) -> str:
    """Tokens back to text: no space before punctuation and clitics (``what 's`` -> ``what's``,
    ``ca n't`` -> ``can't``)."""
    text = " ".join(tokens)
    text = _NO_SPACE_BEFORE.sub("", text)
    return _NO_SPACE_AFTER.sub("", text)


class PPDBSubstitution:
    """Baseline paraphraser: the suggestion replaces the question n-gram it paraphrases.

    The n-gram is the one whose PPDB paraphrases include the suggestion with the best score
    (the earliest on a tie). Without a suggestion, or when no n-gram leads to it, the question
    comes back unchanged (and the pipeline drops it as no paraphrase).
    """

    def __init__(self, table: PPDBTable, max_n: int = 6):
        self.table = table
        self.max_n = max_n
        self.stopwords = load_stopwords()

    def generate(self, inputs: Sequence[Input], beam_size: int | None = None) -> list[str]:
        out = []
        for suggestion, question in inputs:
            if not suggestion or suggestion == NONE_TOKEN:
                out.append(question)
                continue
            tokens = tokenize(question)
            spans = candidate_phrases(tokens, self.max_n, self.stopwords)
            found = self.table.lookup({phrase for _, _, phrase in spans})
            target = " ".join(suggestion.lower().split())
            best: tuple[float, int, int] | None = None
            for start, end, phrase in spans:
                for paraphrase, score in found.get(phrase, ()):
                    if paraphrase == target and (best is None or score > best[0]):
                        best = (score, start, end)
            if best is None:
                out.append(question)
                continue
            _, start, end = best
            out.append(join_tokens([*tokens[:start], *target.split(), *tokens[end:]]))
        return out


def train_paraphraser_model(triples_path: Path, vocab_dir: Path, model_dir: Path,
                            config: Any = None, checkpoint_dir: str | None = None
                            ) -> dict[str, Any]:
    """Train :mod:`models.paraphraser` on the triples; return its trainer state summary.

    ``config`` is a ``models.paraphraser.ParaphraserConfig`` or a mapping of its fields.
    The empty suggestion :data:`NONE_TOKEN` is passed as ``None`` (the model's own token).
    With ``checkpoint_dir`` (a string: its checkpoints change while it runs and are not part
    of the task's cache key), a killed training resumes there.
    """
    from models.paraphraser import train_paraphraser

    triples = [(t.source, None if t.suggestion == NONE_TOKEN else t.suggestion, t.target)
               for t in read_triples(triples_path)]
    if hasattr(config, "model_dump"):
        config = config.model_dump()
    train_paraphraser(triples, vocab_model_path(vocab_dir), dict(config or {}), model_dir,
                      checkpoint_dir=checkpoint_dir)
    state_file = Path(model_dir) / "trainer_state.json"
    state = json.loads(state_file.read_text("utf-8")) if state_file.is_file() else {}
    # No wall-clock time here (it stays in trainer_state.json): these counts go into
    # metrics/paraphrase.json and the reports, which must be the same for the same inputs.
    return {"triples": len(triples),
            **{k: state[k] for k in ("global_step", "epochs", "final_train_loss",
                                     "final_val_loss") if k in state}}


def load_generator(kind: GeneratorKind, model_dir: Path | None = None,
                   ppdb_table: Path | None = None, max_n: int = 6) -> Paraphraser:
    """The paraphraser of ``kind``: the trained model in ``model_dir``, or the PPDB baseline."""
    if kind == "neural":
        if model_dir is None:
            raise ValueError("the neural paraphraser needs model_dir (a trained model)")
        from models.paraphraser import load_paraphraser

        return load_paraphraser(model_dir)
    if kind == "ppdb_substitution":
        if ppdb_table is None:
            raise ValueError("the PPDB substitution baseline needs ppdb_table")
        return PPDBSubstitution(PPDBTable(ppdb_table), max_n)
    raise ValueError(f"unknown paraphraser {kind!r}; expected 'neural' or 'ppdb_substitution'")


def generate_candidates(suggestions_path: Path, out_path: Path, generator: Paraphraser,
                        beam_size: int | None = None, without_suggestion: bool = True,
                        batch_size: int = 64,
                        questions: tuple[int, int] | None = None) -> dict[str, Any]:
    """Paraphrase each question with each of its suggestions (and without one); the counts.

    Outputs that are empty, equal to the question (lower-cased, spaces collapsed) or repeat an
    earlier paraphrase of the same question are dropped and counted. ``questions=(start, end)``
    keeps the table's questions ``start:end`` (in order of first appearance): one shard.
    """
    rows = read_table(suggestions_path).to_pylist()
    if questions is not None:
        rows = rows_of_questions(rows, *questions)
    jobs: list[dict[str, Any]] = []
    seen_none: set[str] = set()
    for row in rows:
        if row["suggestion"] is not None:
            jobs.append(row)
        if without_suggestion and row["qid"] not in seen_none:
            seen_none.add(row["qid"])
            jobs.append({**row, "rank": 0, "phrase": None, "suggestion": None, "score": None})
    counts: dict[str, Any] = dict.fromkeys(COUNT_KEYS, 0)
    counts.update(inputs=len(jobs), questions=len({r["qid"] for r in rows}))
    outputs: list[str] = []
    for i in range(0, len(jobs), batch_size):
        chunk = jobs[i:i + batch_size]
        outputs += generator.generate([(j["suggestion"], j["source"]) for j in chunk],
                                      beam_size)
    kept: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for job, output in zip(jobs, outputs, strict=True):
        paraphrase = normalise_question(output or "")
        if not paraphrase:
            counts["empty"] += 1
        elif paraphrase == normalise_question(job["source"]):
            counts["unchanged"] += 1
        elif (job["qid"], paraphrase) in seen:
            counts["duplicates"] += 1
        else:
            seen.add((job["qid"], paraphrase))
            if job["suggestion"] and job["suggestion"] in paraphrase:
                counts["suggestion_in_output"] += 1
            kept.append({k: job[k] for k in CANDIDATES_SCHEMA.names if k != "paraphrase"}
                        | {"paraphrase": paraphrase})
    counts["candidates"] = len(kept)
    counts["questions_with_candidates"] = len({r["qid"] for r in kept})
    write_table(out_path, kept, schema=CANDIDATES_SCHEMA)
    return counts


def question_order(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The distinct ``qid``s of suggestion rows in order of first appearance."""
    return list(dict.fromkeys(row["qid"] for row in rows))


def rows_of_questions(rows: Sequence[dict[str, Any]], start: int,
                      end: int) -> list[dict[str, Any]]:
    """The rows of questions ``start:end`` (by :func:`question_order`), in table order."""
    wanted = set(question_order(rows)[start:end])
    return [row for row in rows if row["qid"] in wanted]
