"""Table 4 (specialised question encoders) as Markdown and as a section of the HTML report.

Both read ``metrics/specialised_encoders.json`` (written by ``flows/specialised_encoders.py``):
per passage encoder, the top-k of the shared question encoder and of each relation's
specialised one over the same passage index, the macro averages, the relations that did not
run and why, and the memory of one index vs one index per relation.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tasks.io.atomic import write_text
from tasks.reporting.html_page import Heading, Section, Table, Text
from tasks.reporting.tables import markdown_table

TITLE = "Table 4: specialised question encoders over one passage index"


def _num(value: Any, signed: bool = False) -> str:
    if value is None:
        return "–"
    return f"{value:+.2f}" if signed else f"{value:.2f}"


def _mib(size: int) -> str:
    return f"{size / 2 ** 20:.2f} MiB ({size:,} bytes)"


def table_rows(metrics: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows: per relation, shared vs specialised top-k under each passage encoder
    (a relation that did not run says why), then the macro averages."""
    k = metrics["k"]
    encoders = list(metrics["passage_encoders"])
    header = ["relation"]
    for name in encoders:
        header += [f"{name}: shared top-{k}", f"{name}: specialised top-{k}", f"{name}: Δ"]
    rows: list[list[str]] = []
    for relation, plan in metrics["relations"].items():
        row = [relation]
        for name in encoders:
            result = metrics["passage_encoders"][name]["per_relation"].get(relation)
            if result is None:
                shared = metrics["passage_encoders"][name]["shared_all"].get(relation)
                row += [_num(shared and shared[f"top{k}"]), plan["status"], "–"]
            else:
                row += [_num(result["shared"][f"top{k}"]),
                        _num(result["specialised"][f"top{k}"]),
                        _num(result["difference"], signed=True)]
        rows.append(row)
    macro = ["macro (specialised relations)"]
    for name in encoders:
        m = metrics["passage_encoders"][name]["macro"]
        shared, tuned = m["shared"][f"top{k}"], m["specialised"][f"top{k}"]
        diff = None if shared is None or tuned is None else tuned - shared
        macro += [_num(shared), _num(tuned), _num(diff, signed=True)]
    rows.append(macro)
    return header, rows


def memory_rows(metrics: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the index memory: one index vs one per specialised relation."""
    rows = []
    for name, result in metrics["passage_encoders"].items():
        memory = result["memory"]
        rows.append([name, str(result["index"]["rows"]), _mib(memory["one_index_bytes"]),
                     str(memory["relations"]), _mib(memory["one_index_per_relation_bytes"]),
                     _mib(memory["saved_bytes"])])
    return (["passage encoder", "passages", "one index", "relations",
             "one index per relation", "saved"], rows)


def summary_lines(metrics: Mapping[str, Any]) -> list[str]:
    """What ran, how many relations did not and why, how the passage encoders were made."""
    counts = metrics["counts"]
    lines = [f"{counts['ran']} of {counts['relations']} relations specialised; not run: "
             + (", ".join(f"{n} ({why})" for why, n in counts["not_run"].items()) or "none")
             + f". Top-{metrics['k']} accuracy in percent on the EntityQuestions test split "
             f"(answer matching {metrics['has_answer_mode']}); the shared question encoder "
             "is the passage encoder's own; each specialised one is fine-tuned from it on "
             "its relation's training questions with the passage encoder frozen (onlyQ), so "
             "every question encoder searches the same index."]
    paq = metrics.get("paq")
    if paq:
        lines.append(f"dpr-paq: trained on {paq['questions']} PAQ-like questions generated "
                     f"from {paq['sampled']} sampled passages (one question per passage "
                     "stating a fact about its title entity; template-generated, not PAQ's "
                     "trained generator).")
    return lines


def write_specialised_report(metrics: Mapping[str, Any], path: Path) -> str:
    """The Markdown report (atomic); returns its text."""
    if not metrics.get("enabled", True):
        text = f"# {TITLE}\n\nDisabled (specialised_encoders.enabled: false).\n"
    else:
        header, rows = table_rows(metrics)
        memory_header, memory = memory_rows(metrics)
        text = (f"# {TITLE}\n\n" + "\n\n".join(summary_lines(metrics)) + "\n\n"
                + markdown_table(header, rows) + "\n\n## Index memory\n\n"
                + markdown_table(memory_header, memory) + "\n")
    write_text(path, text)
    return text


def specialised_section(metrics_path: Path, shown_as: str) -> Section:
    """The HTML report's Table 4 section (the flow did not run when the metrics are absent:
    the section names them as ``shown_as``)."""
    section = Section("specialised", TITLE, "specialised-encoders")
    if not Path(metrics_path).is_file():
        section.missing.append(shown_as)
        return section
    import json

    metrics = json.loads(Path(metrics_path).read_text(encoding="utf-8"))
    if not metrics.get("enabled", True):
        section.blocks.append(Text("Disabled (specialised_encoders.enabled: false)."))
        return section
    header, rows = table_rows(metrics)
    memory_header, memory = memory_rows(metrics)
    section.blocks += [Text(line) for line in summary_lines(metrics)]
    section.blocks += [
        Table(caption=f"Top-{metrics['k']} per relation: shared vs specialised question "
              "encoder", header=header, rows=rows,
              numeric=[False, *[True] * (len(header) - 1)], total=True),
        Heading("Index memory"),
        Table(caption="One passage index vs one index per relation", header=memory_header,
              rows=memory, numeric=[False, True, True, True, True, True])]
    return section
