"""Top-k accuracy of retrieval-result files written by any retriever (``qastress eval
retrieval``).

A result file is the DPR / EntityQuestions JSON list (:mod:`tasks.io.dpr_results`): questions,
their answers and their passages in rank order. Each file is one relation, as for the
EntityQuestions ``utils/accuracy.py`` script; the macro average is the mean over files
(:func:`tasks.evaluation.topk.macro_average`). Whether a passage holds an answer is either
the file's own ``has_answer`` flags (``stored``, what ``accuracy.py`` reads) or judged again
from the passages' title and text in one of the has_answer modes
(:mod:`tasks.evaluation.has_answer`). That way a file written by DPR's ``dense_retriever.py``,
by Pyserini or by another project is scored by the same rules as our own runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from tasks.answer_modes import MODES, check_mode
from tasks.evaluation.has_answer import prepare_answers
from tasks.evaluation.judge import first_hits, judge_rows
from tasks.evaluation.topk import first_hit_ranks, macro_average, topk_accuracy
from tasks.io.dpr_results import RetrievalResult, read_retrieval_results
from tasks.io.errors import DataFormatError

#: Use the file's own ``has_answer`` flags instead of judging the passages again.
STORED = "stored"
JUDGE_MODES = (STORED, *MODES)


def result_files(paths: Iterable[Path]) -> list[Path]:
    """The files named, a directory standing for its ``*.json`` files (sorted by name)."""
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            inside = sorted(path.glob("*.json"))
            if not inside:
                raise FileNotFoundError(f"{path}: a directory without *.json result files")
            found.extend(inside)
        elif path.is_file():
            found.append(path)
        else:
            raise FileNotFoundError(f"{path}: no such file or directory")
    resolved = [p.resolve() for p in found]
    twice = [p for p, r in zip(found, resolved, strict=True) if resolved.count(r) > 1]
    if twice:
        raise ValueError(f"{twice[0]}: the same result file named twice (each file is one "
                         "relation)")
    names = [p.name for p in found]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"two result files named {repeated[0]!r} (in different directories): "
                         "each file is one relation, named by its file name")
    return found


def _stored_first_hits(path: Path, results: Sequence[RetrievalResult]) -> list[int | None]:
    rows = []
    for index, result in enumerate(results):
        for rank, ctx in enumerate(result.ctxs):
            if ctx.has_answer is None:
                raise DataFormatError(path, f"record {index}, ctxs[{rank}].has_answer",
                                      "true or false (--mode stored reads the file's flags; "
                                      "another mode judges the passages instead)", "no flag")
        rows.append([ctx.has_answer for ctx in result.ctxs])
    return first_hit_ranks(rows)


def _check_answer_regexes(path: Path, results: Sequence[RetrievalResult]) -> None:
    """Regex mode: an answer that does not compile is named by file and record."""
    for index, result in enumerate(results):
        try:
            prepare_answers(result.answers, "regex", on_invalid_regex="raise")
        except ValueError as err:
            raise DataFormatError(path, f"record {index}, answers", "answers that compile as "
                                  "regular expressions (--mode regex)", str(err)) from None


def _judged_first_hits(path: Path, results: Sequence[RetrievalResult],
                       mode: str) -> list[int | None]:
    if mode == "regex":
        _check_answer_regexes(path, results)
    passages = {(q, rank): (ctx.title, ctx.text)
                for q, result in enumerate(results) for rank, ctx in enumerate(result.ctxs)}
    rows = [[(q, rank) for rank in range(len(result.ctxs))] for q, result in enumerate(results)]
    judged = judge_rows([result.answers for result in results], rows, passages, mode,
                        result_ctxs=0, on_invalid_regex="raise", workers=1)
    return first_hits(judged)


def result_file_accuracy(path: Path, ks: Sequence[int], mode: str = STORED) -> dict:
    """``{"questions": n, "ctxs": {"min": m, "max": M}, k: top-k accuracy (a fraction), ...}``
    of one result file (``ctxs``: the fewest and the most passages a question holds; at a k
    above the fewest, a question is judged on the passages it has, as ``accuracy.py`` does)."""
    if mode != STORED:
        check_mode(mode)
    results = read_retrieval_results(path)
    if not results:
        raise DataFormatError(path, "top level", "at least one retrieval result", "[]")
    hits = (_stored_first_hits(path, results) if mode == STORED
            else _judged_first_hits(path, results, mode))
    counts = [len(result.ctxs) for result in results]
    return {"questions": len(results), "ctxs": {"min": min(counts), "max": max(counts)},
            **topk_accuracy(hits, ks)}


def score_result_files(paths: Iterable[Path], ks: Sequence[int],
                       mode: str = STORED) -> dict:
    """Top-k accuracy (%) of each result file, named by its file name, and their macro
    average (the mean of the files' accuracies, as ``accuracy.py``'s "Average" row)."""
    if mode not in JUDGE_MODES:
        raise ValueError(f"unknown mode {mode!r}; expected one of {', '.join(JUDGE_MODES)}")
    ks = list(dict.fromkeys(ks))
    fractions = {path.name: result_file_accuracy(path, ks, mode)
                 for path in result_files(paths)}
    average = macro_average({name: {k: acc[k] for k in ks} for name, acc in fractions.items()})
    return {"mode": mode, "ks": ks,
            "files": {name: {"questions": acc["questions"], "ctxs": acc["ctxs"],
                             **{f"top{k}": 100 * acc[k] for k in ks}}
                      for name, acc in fractions.items()},
            "macro": {f"top{k}": 100 * average[k] for k in ks},
            "questions": sum(acc["questions"] for acc in fractions.values())}


def short_rankings(report: dict) -> list[str]:
    """One note per file whose questions hold fewer passages than a cut-off asks for (its
    top-k then counts only the passages there are: a question without any is a miss)."""
    notes = []
    for name, scores in sorted(report["files"].items()):
        fewest, most = scores["ctxs"]["min"], scores["ctxs"]["max"]
        above = [k for k in report["ks"] if k > fewest]
        if above:
            held = f"{fewest}" if fewest == most else f"{fewest} to {most}"
            plural = "s" if most != 1 else ""
            notes.append(f"{name}: its questions hold {held} passage{plural}, fewer than k="
                         f"{', '.join(map(str, above))}: top-k there counts the passages "
                         "there are")
    return notes


def accuracy_table(report: dict) -> str:
    """The report as ``accuracy.py`` prints its table: a tab-separated header ``k=1 ...
    filename``, one row per file sorted by name with ``{:.1%}`` cells, then "Average" when
    there is more than one file."""
    ks = report["ks"]
    rows = [[f"k={k}" for k in ks] + ["filename"]]
    for name in sorted(report["files"]):
        rows.append([f"{report['files'][name][f'top{k}'] / 100:.1%}" for k in ks] + [name])
    if len(report["files"]) > 1:
        rows.append([f"{report['macro'][f'top{k}'] / 100:.1%}" for k in ks] + ["Average"])
    return "\n".join("\t".join(row) for row in rows) + "\n"
