"""The sections of the HTML report, each built from the artifacts one flow wrote.

Every section reads its numbers from the artifacts (never recomputes them) and says which flow
did not run when its artifacts are missing; :func:`headline_lines` collects the headline numbers.
Paths are shown relative to the report's root (:func:`display_path`). The page around the
sections is :mod:`tasks.reporting.html_report`.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tasks.config import Params
from tasks.orchestration import path_fingerprint
from tasks.reporting.html_page import (
    Figure,
    Heading,
    Markdown,
    Preformatted,
    Section,
    Table,
    Text,
    render_markdown,
)
from tasks.reporting.tables import difference_rows

# --- helpers --------------------------------------------------------------------------------


def display_path(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` (POSIX separators); absolute only when outside it."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        return Path(path).as_posix() if not Path(path).is_absolute() else absolute.as_posix()


def _num(value: Any, signed: bool = False) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:+.2f}" if signed else f"{value:.2f}"
    return str(value)


def _ks(accuracy: Mapping[str, Any]) -> list[int]:
    """The k of ``{"top1": .., "top20": ..}`` in increasing order."""
    return sorted(int(key.removeprefix("top")) for key in accuracy if key.startswith("top"))


def _headline_k(wanted: int, ks: Sequence[int]) -> int:
    return wanted if wanted in ks or not ks else max(ks)


def read_json(path: Path) -> Any:
    """The JSON document at ``path``; an error naming the file when it is not valid JSON."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from None


def _figure(path: Path, caption: str) -> Figure:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return Figure(caption=caption, src=f"data:image/png;base64,{data}", name=path.name)


def _missing(section: Section, artifacts: Mapping[str, Path], names: Sequence[str],
             root: Path) -> bool:
    """Record the absent artifacts of ``names`` on the section; True when any is absent."""
    absent = [display_path(artifacts[n], root) for n in names if not artifacts[n].is_file()]
    section.missing.extend(absent)
    return bool(absent)


# --- sections -------------------------------------------------------------------------------


def _markdown_section(section: Section, artifacts: Mapping[str, Path], key: str,
                      root: Path) -> Section:
    """A section showing one Markdown report of a flow (``artifacts[key]``)."""
    if not _missing(section, artifacts, [key], root):
        section.blocks.append(Markdown(render_markdown(_relative_text(
            artifacts[key].read_text(encoding="utf-8"), root))))
    return section


def entity_questions_section(artifacts: Mapping[str, Path], root: Path) -> Section:
    """The EntityQuestions summary (Markdown written by the entity-questions flow)."""
    return _markdown_section(Section("entityquestions", "EntityQuestions construction",
                                     "entity-questions"), artifacts, "eq_summary", root)


def topk_section(artifacts: Mapping[str, Path], root: Path, metrics: dict[str, dict]) -> Section:
    """Top-k accuracy tables of every retriever that ran."""
    section = Section("topk", "Top-k retrieval accuracy per retriever", "retrieval")
    _missing(section, artifacts, [key for key in artifacts if key.startswith("topk_")], root)
    for name, m in metrics.items():
        ks = _ks(m["macro"])
        rows = [[relation, *[_num(acc.get(f"top{k}")) for k in ks]]
                for relation, acc in m["per_relation"].items()]
        rows.append(["macro average", *[_num(m["macro"].get(f"top{k}")) for k in ks]])
        section.blocks += [
            Heading(name),
            Text(f"{m['questions']} EntityQuestions test questions; answer matching "
                 f"{m['has_answer_mode']} (DPR simple tokenizer); top-k accuracy in percent."),
            Table(caption=f"{name}: top-k accuracy per relation",
                  header=["relation", *[f"top-{k}" for k in ks]], rows=rows,
                  numeric=[False, *[True] * len(ks)], total=True)]
    return section


def comparison_section(params: Params, artifacts: Mapping[str, Path], root: Path,
                       metrics: dict[str, dict]) -> Section:
    """Paired bootstrap comparisons of the retrievers and the accuracy-vs-k figure."""
    section = Section("comparison", "Retriever comparison", "retrieval")
    if metrics:
        ks = sorted({k for m in metrics.values() for k in _ks(m["macro"])})
        section.blocks.append(Table(
            caption="Macro-average top-k accuracy over relations (percent)",
            header=["retriever", *[f"top-{k}" for k in ks]],
            rows=[[name, *[_num(m["macro"].get(f"top{k}")) for k in ks]]
                  for name, m in metrics.items()],
            numeric=[False, *[True] * len(ks)]))
    if len(params.retrieval.retrievers) < 2 and not artifacts["comparison"].is_file():
        section.blocks.append(Text("One retriever configured: nothing to compare."))
    elif not _missing(section, artifacts, ["comparison"], root):
        comparison = read_json(artifacts["comparison"])
        header, rows = difference_rows(comparison)
        section.blocks.append(Text(
            f"Top-{comparison['k']} accuracy over all {comparison['questions']} questions; "
            f"A - B in points with a paired bootstrap {round(100 * comparison['confidence'])}% "
            f"percentile interval over questions ({comparison['n_bootstrap']} resamples, seed "
            f"{comparison['seed']}); significant when the interval excludes 0."))
        section.blocks.append(Table(caption=f"Differences at top-{comparison['k']}",
                                    header=list(header), rows=[[str(c) for c in r] for r in rows],
                                    numeric=[False, False, True, True, True, False, False]))
    if not _missing(section, artifacts, ["accuracy_plot"], root):
        section.blocks.append(_figure(artifacts["accuracy_plot"],
                                      "Top-k accuracy against k (macro average over relations)"))
    return section


def buckets_section(params: Params, artifacts: Mapping[str, Path], root: Path) -> Section:
    """Accuracy per subject-frequency bucket (Figure 1 of Sciavolino et al.)."""
    section = Section("buckets", "Accuracy per subject-frequency bucket (Figure 1)", "retrieval")
    cfg = params.retrieval
    if not (cfg.bucket_relations and cfg.bucket_sets) and not artifacts["buckets"].is_file():
        section.blocks.append(Text("Not configured (retrieval.bucket_relations or "
                                   "retrieval.bucket_sets is empty)."))
        return section
    if not _missing(section, artifacts, ["buckets_plot"], root):
        section.blocks.append(_figure(artifacts["buckets_plot"],
                                      f"Figure 1: top-{cfg.headline_k} accuracy per subject-"
                                      "frequency bucket, one panel per relation"))
    if _missing(section, artifacts, ["buckets"], root):
        return section
    metrics = read_json(artifacts["buckets"])
    k = _headline_k(cfg.headline_k, list(metrics.get("ks", [])))
    retrievers = list(metrics["retrievers"])
    section.blocks.append(Text(
        f"bucket0 = {metrics.get('bucket0', 'bucket 0')}; answer matching "
        f"{metrics.get('has_answer_mode', '?')}; top-{k} accuracy in percent (– = empty "
        "bucket)."))
    for bucket_set, relations in metrics["sets"].items():
        for relation, buckets in relations.items():
            ranged = any("hyperlinks" in entry for entry in buckets.values())
            rows = []
            for bucket, entry in buckets.items():
                span = entry.get("hyperlinks")
                rows.append([bucket, _num(entry.get("questions")),
                             *([f"{span[0]}–{span[1]}" if span else "–"] if ranged else []),
                             *[_num((entry.get(r) or {}).get(f"top{k}")) for r in retrievers]])
            section.blocks.append(Table(
                caption=f"{bucket_set}, {relation}",
                header=["bucket", "questions", *(["subject hyperlinks"] if ranged else []),
                        *[f"{r} top-{k}" for r in retrievers]],
                rows=rows, numeric=[False, True, *([False] if ranged else []),
                                    *[True] * len(retrievers)]))
    return section


def paraphrase_section(artifacts: Mapping[str, Path], root: Path) -> Section:
    """The paraphrase report (Markdown written by the paraphrase flow)."""
    return _markdown_section(Section("paraphrase", "Paraphrased SQuAD test sets", "paraphrase"),
                             artifacts, "paraphrase_report", root)


def paraphrased_retrieval_section(params: Params, artifacts: Mapping[str, Path],
                                  root: Path) -> Section:
    """Retrieval accuracy on original vs paraphrased questions, with the CI of the drop."""
    section = Section("paraphrased-retrieval", "Retrieval on original vs paraphrased questions",
                      "paraphrased-retrieval")
    if _missing(section, artifacts, ["paraphrased_retrieval"], root):
        return section
    metrics = read_json(artifacts["paraphrased_retrieval"])
    if not metrics.get("sets"):
        note = metrics.get("note", "no paraphrased set with questions")
        section.blocks.append(Text(f"Not evaluated: {_relative_text(note, root)}."))
        return section
    k = metrics["k"]
    section.blocks.append(Text(
        f"Top-{k} accuracy (percent) of the original and the paraphrased questions over their "
        f"contexts ({metrics.get('collection_passages', '?')} passages); orig - para in points "
        f"with a paired bootstrap {round(100 * metrics['confidence'])}% interval over question "
        f"positions ({metrics['n_bootstrap']} resamples, seed {metrics['seed']}); positive = "
        "paraphrasing hurts."))
    rows = [[set_name, name, str(block["questions"]), _num(r["orig"].get(f"top{k}")),
             _num(r["para"].get(f"top{k}")), _num(r["difference"], signed=True),
             f"[{r['ci_low']:+.2f}, {r['ci_high']:+.2f}]", _num(r["significant"]),
             f"{r['lost']} / {r['gained']}"]
            for set_name, block in metrics["sets"].items()
            for name, r in block["retrievers"].items()]
    section.blocks.append(Table(
        caption=f"Original vs paraphrased, top-{k}",
        header=["set", "retriever", "questions", f"orig top-{k}", f"para top-{k}",
                "orig - para", f"{round(100 * metrics['confidence'])}% CI", "significant",
                "lost / gained"],
        rows=rows, numeric=[False, False, True, True, True, True, False, False, False]))
    for set_name, block in metrics["sets"].items():
        hurt = block.get("most_hurt")
        section.blocks.append(Text(f"Most hurt on {set_name}: {hurt}." if hurt else
                                   f"No retriever lost accuracy on {set_name}."))
    return section


def other_figures_section(figures: Sequence[Path],
                          artifacts: Mapping[str, Path]) -> Section | None:
    """Figures no other section shows, or ``None`` when there are none."""
    known = {Path(os.path.abspath(p)) for p in artifacts.values()}
    others = [p for p in figures if Path(os.path.abspath(p)) not in known and p.is_file()]
    if not others:
        return None
    section = Section("figures", "Other figures", None)
    section.blocks += [_figure(p, p.name) for p in others]
    return section


def _relative_text(text: str, root: Path) -> str:
    """Free text from an artifact with ``root/`` prefixes of absolute paths removed."""
    return text.replace(f"{root}{os.sep}", "")


def params_section(params: Params, root: Path) -> Section:
    """The resolved parameters as YAML (paths relative to the report's root)."""
    import yaml

    dump = params.model_dump(mode="json")
    dump["paths"] = {key: display_path(Path(value), root)
                     for key, value in dump["paths"].items()}
    text = yaml.safe_dump(dump, sort_keys=False, allow_unicode=True, width=96,
                          default_flow_style=None)
    return Section("params", "Resolved parameters", None, blocks=[
        Text(f"Profile {params.profile}, after the profile overlay and overrides; paths "
             "relative to the directory that holds paths.reports."),
        Preformatted(text)])


def fingerprints_section(raw: Mapping[str, Sequence[Path]], read: Sequence[Path],
                         figures: Sequence[Path], root: Path) -> Section:
    """The sha256 of every raw input, artifact and figure the page was made from."""
    section = Section("fingerprints", "Data fingerprints", None)
    section.blocks.append(Text(
        "sha256 of the files' bytes (a directory with a manifest.json: the fingerprint "
        "recorded there). The same fingerprints mean the same data."))
    rows = [[key, display_path(p, root), path_fingerprint(p)]
            for key, paths in raw.items() for p in paths]
    section.blocks.append(Table(caption="Raw inputs (sources)", header=["source", "path",
                                "sha256"], rows=rows, numeric=[False, False, False])
                          if rows else Text("No raw input found under paths.raw."))
    seen: dict[str, Path] = {}
    for path in [*read, *figures]:
        seen.setdefault(display_path(path, root), path)
    section.blocks.append(Table(
        caption="Artifacts read by this report", header=["path", "sha256"],
        rows=[[name, path_fingerprint(path)] for name, path in seen.items()],
        numeric=[False, False]))
    return section


def headline_lines(params: Params, metrics: Mapping[str, dict], artifacts: Mapping[str, Path],
                   not_run: Sequence[str], extra: Sequence[str] = ()) -> list[str]:
    """Headline numbers as Markdown bullet lines (``extra`` lines before the flows not run)."""
    lines: list[str] = []
    k = params.retrieval.headline_k
    for name, m in metrics.items():
        kk = _headline_k(k, _ks(m["macro"]))
        lines.append(f"- {name}: macro top-{kk} accuracy {_num(m['macro'].get(f'top{kk}'))}% "
                     f"({m['questions']} EntityQuestions test questions)")
    if artifacts["comparison"].is_file():
        comparison = read_json(artifacts["comparison"])
        for pair in comparison["pairs"].values():
            lines.append(f"- top-{comparison['k']} {pair['a']} - {pair['b']}: "
                         f"{pair['difference']:+.2f} points, "
                         f"{round(100 * comparison['confidence'])}% CI "
                         f"[{pair['ci_low']:+.2f}, {pair['ci_high']:+.2f}]")
    if artifacts["paraphrase_metrics"].is_file():
        stats = read_json(artifacts["paraphrase_metrics"])
        for key, label in (("test_set", "paraphrased test set"),
                           ("adversarial_set", "adversarial set")):
            block = stats.get(key) or {}
            if "test_pairs" in block:
                lines.append(f"- {label}: {block['test_pairs']} of {block.get('questions', '?')} "
                             "questions paraphrased")
    if artifacts["paraphrased_retrieval"].is_file():
        para = read_json(artifacts["paraphrased_retrieval"])
        for set_name, block in (para.get("sets") or {}).items():
            for name, r in block["retrievers"].items():
                lines.append(f"- {set_name} {name}: top-{para['k']} orig - para "
                             f"{r['difference']:+.2f} points, CI "
                             f"[{r['ci_low']:+.2f}, {r['ci_high']:+.2f}]")
    lines += extra
    if not_run:
        lines.append(f"- not run: {', '.join(not_run)}")
    return lines
