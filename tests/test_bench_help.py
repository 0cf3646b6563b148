"""Every option of the benchmark scripts (``bench/*.py``) explains itself in ``--help``.

Two checks:

* static (an AST scan, instant): every ``add_argument(...)`` call in ``bench/*.py`` (the shared
  ``_harness.py`` helpers included) passes ``help=``; a literal help text is not empty and
  survives argparse's ``%``-formatting (a stray ``%`` would crash ``--help``); an option hidden
  with ``help=argparse.SUPPRESS`` is one of :data:`HIDDEN` (the internal options a benchmark
  passes to its own child processes);
* at run time: each script that builds a parser runs ``--help`` in its own Python process (all
  at once; the scripts import their heavy libraries after parsing, so this takes seconds) with
  ``ArgumentParser.parse_known_args`` spied on, so that the parser it built can be inspected:
  the exit status is 0, the description is printed, and every action but ``-h`` has a help text
  and shows up in the output, unless it is in :data:`HIDDEN`.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"

#: ``(script, option)`` pairs hidden from ``--help`` on purpose: how a benchmark tells the copy of
#: itself that it starts in a child process what to measure.
HIDDEN = {
    ("bench_checkpoint_save.py", "--writer"), ("bench_checkpoint_save.py", "--path"),
    ("bench_grad_cache.py", "--mode"), ("bench_grad_cache.py", "--batch-size"),
    ("bench_ppdb.py", "--worker"), ("bench_ppdb.py", "--rules"), ("bench_ppdb.py", "--table"),
    ("bench_questions.py", "--measure"),
    ("stage_concurrency.py", "--child"),
}

#: Runs a script with ``--help`` and prints, after a marker line, what its parser holds.
SPY = r"""
import argparse, contextlib, io, json, os, runpy, sys

path = sys.argv[1]
sys.path[0] = os.path.dirname(os.path.abspath(path))  # as `python bench/<script>.py` has it
parsers = []
original = argparse.ArgumentParser.parse_known_args

def spy(self, args=None, namespace=None):
    parsers.append(self)
    return original(self, args, namespace)

argparse.ArgumentParser.parse_known_args = spy
sys.argv = [path, "--help"]
out, code = io.StringIO(), "no exit"
with contextlib.redirect_stdout(out):
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as exc:
        code = exc.code
parser = parsers[0] if parsers else None
print("@@bench-help@@")
print(json.dumps({
    "code": code, "output": out.getvalue(),
    "description": parser.description if parser else None,
    "actions": [{"options": list(a.option_strings), "dest": a.dest, "help": a.help,
                 "suppressed": a.help == argparse.SUPPRESS,
                 "is_help": isinstance(a, argparse._HelpAction)}
                for a in (parser._actions if parser else [])],
}))
"""


def scripts() -> list[Path]:
    return sorted(BENCH.glob("*.py"))


def _add_argument_calls(tree: ast.AST) -> list[ast.Call]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"]


def _builds_parser(tree: ast.AST) -> bool:
    return any(isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Attribute) and node.func.attr == "ArgumentParser")
        or (isinstance(node.func, ast.Name) and node.func.id == "ArgumentParser"))
        for node in ast.walk(tree))


def _is_suppress(node: ast.expr) -> bool:
    return ((isinstance(node, ast.Attribute) and node.attr == "SUPPRESS")
            or (isinstance(node, ast.Constant) and node.value == argparse.SUPPRESS))


class _AnyKey(dict):
    """What argparse %-formats a help text with: any ``%(name)s`` resolves."""

    def __missing__(self, key: str) -> str:
        return "x"


def help_problems(path: Path) -> list[str]:
    """``add_argument`` calls in ``path`` without a usable help text, as ``file:line: why``."""
    problems = []
    for call in _add_argument_calls(ast.parse(path.read_text(encoding="utf-8"))):
        names = [a.value for a in call.args if isinstance(a, ast.Constant)]
        where = f"{path.name}:{call.lineno}: {'/'.join(map(str, names)) or '?'}"
        help_ = next((k.value for k in call.keywords if k.arg == "help"), None)
        if help_ is None:
            problems.append(f"{where}: no help=")
        elif _is_suppress(help_):
            if not any((path.name, name) in HIDDEN for name in names):
                problems.append(f"{where}: hidden (help=argparse.SUPPRESS) but not in HIDDEN")
        elif isinstance(help_, ast.Constant):
            if not isinstance(help_.value, str) or not help_.value.strip():
                problems.append(f"{where}: empty help")
            else:
                try:
                    help_.value % _AnyKey()
                except (ValueError, TypeError) as exc:
                    problems.append(f"{where}: help breaks argparse's %-formatting ({exc})")
    return problems


def test_every_add_argument_has_help() -> None:
    problems = [p for path in scripts() for p in help_problems(path)]
    assert not problems, "options without a help text:\n" + "\n".join(problems)


def test_the_static_scan_sees_a_missing_help(tmp_path: Path) -> None:
    script = tmp_path / "bench_x.py"
    script.write_text("import argparse\np = argparse.ArgumentParser()\n"
                      "p.add_argument('--fine', help='ok')\np.add_argument('--bare', type=int)\n"
                      "p.add_argument('--empty', help='')\np.add_argument('--pct', help='5 %')\n"
                      "p.add_argument('--hidden', help=argparse.SUPPRESS)\n", encoding="utf-8")
    found = "\n".join(help_problems(script))
    for name in ("--bare", "--empty", "--pct", "--hidden"):
        assert name in found
    assert "--fine" not in found


PARSER_SCRIPTS = [p for p in scripts()
                  if _builds_parser(ast.parse(p.read_text(encoding="utf-8")))]


@cache
def help_runs() -> dict[str, tuple[int, str, str]]:
    """``{script: (exit status, stdout, stderr)}`` of the spied ``--help`` runs, run at once."""
    running = {p.name: subprocess.Popen([sys.executable, "-c", SPY, str(p)], cwd=ROOT,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True)
               for p in PARSER_SCRIPTS}
    out = {}
    for name, proc in running.items():
        stdout, stderr = proc.communicate(timeout=120)
        out[name] = (proc.returncode, stdout, stderr)
    return out


def test_scripts_with_a_parser_are_found() -> None:
    assert len(PARSER_SCRIPTS) >= 20, [p.name for p in PARSER_SCRIPTS]


@pytest.mark.parametrize("script", [p.name for p in PARSER_SCRIPTS])
def test_help_explains_every_option(script: str) -> None:
    status, stdout, stderr = help_runs()[script]
    assert status == 0 and "@@bench-help@@" in stdout, f"{script} --help failed:\n{stderr}"
    report = json.loads(stdout.split("@@bench-help@@", 1)[1])
    assert report["code"] in (0, None), f"{script} --help exited with {report['code']!r}"
    assert report["actions"], f"{script}: no parser reached parse_args"
    output = report["output"]
    assert output.startswith("usage:"), output[:200]

    def flat(text: str) -> str:
        return re.sub(r"\s+", " ", text).strip()

    assert report["description"] and flat(report["description"]) in flat(output), \
        f"{script}: --help shows no description"
    missing = []
    for action in report["actions"]:
        if action["is_help"]:
            continue
        name = (action["options"] or [action["dest"]])[0]
        if action["suppressed"]:
            if (script, name) not in HIDDEN:
                missing.append(f"{name}: hidden, but not in HIDDEN")
            continue
        if not (action["help"] or "").strip():
            missing.append(f"{name}: no help text")
        if action["options"] and name not in output:  # (a positional shows its metavar)
            missing.append(f"{name}: not in the --help output")
    assert not missing, f"{script}:\n" + "\n".join(missing)
