"""One-way layers: config -> io -> models -> domain -> demo world -> flows -> cli.

An AST scan of every import in ``tasks/``, ``models/``, ``flows/`` and ``bench/`` (lazy imports
inside functions included; an ``if __name__ == "__main__":`` block is an entry point, not a
dependency). A module may import modules of its own rank or a lower one; two different
packages of the same rank (``tasks.questions`` and ``tasks.paraphrase``) may not import each
other. A flow may import from another flow module only its functions (a subflow, or the function
that runs one on the task runner), never a constant; ``flows/_*.py`` are the flows' own wiring
helpers (parameters, the retrieval wiring) and may be imported whole. Each violation is reported as
``file:line: importer -> imported (why)``.

The same scan finds calls with many positional arguments: flow calls with 8 or more arguments
use keywords.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("tasks", "models", "flows", "bench")

#: Module prefix -> rank (low to high). The longest matching prefix wins. A module may import
#: its own rank or lower; different packages of one rank may not import each other.
LAYERS: dict[str, int] = {
    # configuration: pydantic models over params.yaml and what they need; imports nothing above
    "tasks.config": 0,
    "tasks.params_loading": 0,  # params.yaml read, profiles merged, validated into Params
    "tasks.paraphraser_config": 0,
    "tasks.mlm_config": 0,
    "tasks.retriever_config": 0,
    "tasks.retriever_experiments_config": 0,
    "tasks.reader_config": 0,
    "tasks.readers_config": 0,
    "tasks.config_section": 0,
    "tasks.retrieval_config": 0,
    "tasks.orchestration_config": 0,
    "tasks.specialised_config": 0,
    "tasks.retrieve_then_read_config": 0,
    "tasks.model_names": 0,
    "tasks.relation_templates": 0,
    "tasks.answer_modes": 0,
    # io and infrastructure: readers/writers of real formats, layout, Prefect plumbing, fetch
    "tasks": 10,  # the package itself (environment set-up only)
    "tasks.io": 10,
    "tasks.layout": 10,
    "tasks.orchestration": 10,
    "tasks.distribution": 10,
    "tasks.server": 10,
    "tasks.fetch": 10,
    "tasks.fetch_sources": 10,
    "tasks.temporary_api": 10,
    "tasks.pipeline": 10,  # the stage registry: names, paths and params only
    "tasks.scores": 10,
    # models: networks and their training; they read config and io, never tasks' domain
    "models": 20,
    # domain, in the order the packages use each other
    "tasks.evaluation": 30,
    "tasks.reporting": 40,
    "tasks.retrieval": 50,
    "tasks.questions": 60,
    "tasks.paraphrase": 60,
    "tasks.training": 70,
    "tasks.reading": 70,
    # the synthetic demo world: a data source that only flows, bench and tests reach
    "tasks.demo": 80,
    # flows (subflows of one another only through @flow functions), then the command line
    "flows": 90,
    "flows.cli": 100,
    "bench": 110,
}

#: Packages of one rank that must not import each other (siblings in the domain).
INDEPENDENT: tuple[frozenset[str], ...] = (
    frozenset({"tasks.questions", "tasks.paraphrase"}),
    frozenset({"tasks.training", "tasks.reading"}),
)

#: Known violations in files owned by other engineers, fixed at merge: (file, imported module).
#: Shrink this list; never grow it.
ALLOWED_IMPORTS: set[tuple[str, str]] = set()

#: Calls with 8+ positional arguments in files owned by other engineers, fixed at merge:
#: (file, called name). Shrink this list; never grow it.
ALLOWED_POSITIONAL_CALLS: set[tuple[str, str]] = {
    ("flows/bm25_search.py", "run_on_runner"),
    ("flows/encode_passages.py", "run_on_runner"),
    ("flows/entity_questions.py", "step(bucket_facts_task)"),
    ("flows/entity_questions.py", "step(link_nq_task)"),
    ("flows/entity_questions.py", "step(write_dataset_task)"),
    ("flows/entity_questions.py", "step(dpr_training_task)"),
    ("tasks/retrieval/bm25.py", "in_jvm_process"),
    ("tasks/retrieval/buckets.py", "bucket_metrics"),
    ("tasks/retrieval/encoders.py", "encode_texts"),
}
MAX_POSITIONAL = 7


@dataclass(frozen=True)
class Import:
    """One import statement's target as seen from a file."""

    path: str
    line: int
    importer: str
    module: str
    names: tuple[str, ...]


def module_name(path: Path) -> str:
    """``tasks/io/atomic.py`` -> ``tasks.io.atomic``; ``tasks/io/__init__.py`` -> ``tasks.io``."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_files() -> list[Path]:
    """Every Python file of the scanned top-level packages."""
    return sorted(p for top in SCANNED for p in (ROOT / top).rglob("*.py"))


def _is_main_guard(node: ast.AST) -> bool:
    return (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
            and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__")


def _nodes_outside_main_guard(tree: ast.AST):
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child for child in ast.iter_child_nodes(node) if not _is_main_guard(child))


def _is_package(module: str) -> bool:
    return (ROOT / module.replace(".", "/") / "__init__.py").is_file()


def imports_of(path: Path) -> list[Import]:
    """The project-internal imports of one file, with absolute module names."""
    importer = module_name(path)
    package = importer if path.name == "__init__.py" else importer.rpartition(".")[0]
    rel = str(path.relative_to(ROOT))
    found = []
    for node in _nodes_outside_main_guard(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [Import(rel, node.lineno, importer, alias.name, ()) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names = tuple(alias.name for alias in node.names)
            if _is_package(module):  # `from tasks.io import atomic`: each submodule counts
                subs = [n for n in names if (ROOT / module.replace(".", "/") / f"{n}.py").is_file()
                        or _is_package(f"{module}.{n}")]
                found += [Import(rel, node.lineno, importer, f"{module}.{n}", ()) for n in subs]
                names = tuple(n for n in names if n not in subs)
                if not names:
                    continue
            found.append(Import(rel, node.lineno, importer, module, names))
    return [i for i in found if i.module.split(".")[0] in SCANNED]


#: Modules ranked by their exact name: the ``tasks`` package itself only sets the environment
#: (offline, telemetry, Prefect's API start-up timeout) and imports nothing.
EXACT: dict[str, int] = {"tasks": 0}


def layer_of(module: str) -> tuple[str, int]:
    """(matching prefix, rank) of a module; KeyError when no prefix of LAYERS matches."""
    if module in EXACT:
        return module, EXACT[module]
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        if prefix in LAYERS:
            return prefix, LAYERS[prefix]
    raise KeyError(module)


@cache
def flow_functions(module: str) -> frozenset[str]:
    """Top-level functions of a flows module (its flows and the functions running them)."""
    path = ROOT / (module.replace(".", "/") + ".py")
    if not path.is_file():
        return frozenset()
    return frozenset(node.name for node in ast.parse(path.read_text(encoding="utf-8")).body
                     if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef))


def violation(imp: Import) -> str | None:
    """Why ``imp`` breaks the layers, or None."""
    try:
        src_prefix, src_rank = layer_of(imp.importer)
    except KeyError:
        return f"{imp.importer} has no layer: add its package to LAYERS in tests/test_layers.py"
    try:
        dst_prefix, dst_rank = layer_of(imp.module)
    except KeyError:
        return f"{imp.module} has no layer: add its package to LAYERS in tests/test_layers.py"
    if dst_rank > src_rank:
        return f"imports upward (rank {src_rank} {src_prefix} -> rank {dst_rank} {dst_prefix})"
    if src_prefix != dst_prefix and any({src_prefix, dst_prefix} <= group for group in INDEPENDENT):
        return f"imports a sibling domain package ({src_prefix} -> {dst_prefix})"
    if (src_prefix == "flows" and dst_prefix == "flows" and imp.module != imp.importer
            and not imp.module.startswith("flows._") and imp.module.count(".") == 1):
        if not imp.names:
            return f"imports the flow module {imp.module} whole: import its functions"
        not_flows = [n for n in imp.names if n not in flow_functions(imp.module)]
        if not_flows:
            return (f"imports {not_flows} from another flow: flows share only functions "
                    "(constants belong in config or the domain)")
    return None


def layer_violations() -> list[tuple[Import, str]]:
    """Every import that breaks the layers, with the reason."""
    out = []
    for path in source_files():
        for imp in imports_of(path):
            why = violation(imp)
            if why:
                out.append((imp, why))
    return out


def _format(found: list[tuple[Import, str]]) -> str:
    return "\n".join(f"{imp.path}:{imp.line}: {imp.importer} -> {imp.module}"
                     f"{' ' + str(list(imp.names)) if imp.names else ''} ({why})"
                     for imp, why in found)


def test_imports_follow_the_layers():
    """No import goes up a layer, across siblings, or takes a constant from another flow."""
    found = layer_violations()
    new = [(imp, why) for imp, why in found if (imp.path, imp.module) not in ALLOWED_IMPORTS]
    assert not new, "imports against the layers:\n" + _format(new)


def test_import_allow_list_only_shrinks():
    """Every allow-listed import still exists (delete the entry once it is fixed)."""
    found = {(imp.path, imp.module) for imp, _ in layer_violations()}
    fixed = sorted(ALLOWED_IMPORTS - found)
    assert not fixed, f"fixed, remove from ALLOWED_IMPORTS: {fixed}"


def test_every_scanned_module_has_a_layer():
    """A new package fails loudly until it is placed in LAYERS."""
    unplaced = []
    for path in source_files():
        try:
            layer_of(module_name(path))
        except KeyError:
            unplaced.append(str(path.relative_to(ROOT)))
    assert not unplaced, f"add to LAYERS: {unplaced}"


@pytest.mark.parametrize(("importer", "source", "expected"), [
    ("tasks/config.py", "from tasks.questions.templates import load_templates\n", "upward"),
    ("tasks/paraphrase/x.py", "def f():\n    from tasks.demo.kb import build\n", "upward"),
    ("models/x.py", "from tasks.paraphrase import tagging_data\n", "upward"),
    ("tasks/questions/x.py", "from ..paraphrase.text import f\n", "sibling"),
    ("flows/x.py", "from flows.retrieval import RRF_K\n", "constant"),
    ("flows/x.py", "from flows.retrieval import retrieval\n", None),
    ("flows/x.py", "if __name__ == '__main__':\n    from flows.cli import main_for\n", None),
    ("tasks/io/x.py", "from tasks.config import Params\nfrom . import atomic\n", None),
])
def test_rule_checker_catches_violations(tmp_path, monkeypatch, importer, source, expected):
    """The checker itself: each kind of violation is reported with file and line."""
    fake = ROOT / importer
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: source
                        if self == fake else Path.read_bytes(self).decode())
    found = [(imp, why) for imp in imports_of(fake) if (why := violation(imp))]
    if expected is None:
        assert not found, _format(found)
    else:
        assert found and found[0][0].line >= 1 and expected in found[0][1], _format(found)
        assert _format(found).startswith(f"{importer}:{found[0][0].line}: ")


def positional_calls(path: Path) -> list[tuple[int, str, int]]:
    """(line, called name, count) of the calls with more than MAX_POSITIONAL positional args."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            positional = [a for a in node.args if not isinstance(a, ast.Starred)]
            if len(positional) > MAX_POSITIONAL:
                out.append((node.lineno, ast.unparse(node.func), len(positional)))
    return out


def test_long_calls_use_keywords():
    """Calls with 8 or more arguments name them (keywords), outside the shrinking allow-list."""
    found, seen = [], set()
    for path in source_files():
        rel = str(path.relative_to(ROOT))
        for line, name, count in positional_calls(path):
            seen.add((rel, name))
            if (rel, name) not in ALLOWED_POSITIONAL_CALLS:
                found.append(f"{rel}:{line}: {name}(...) with {count} positional arguments")
    assert not found, "use keyword arguments:\n" + "\n".join(found)
    fixed = sorted(ALLOWED_POSITIONAL_CALLS - seen)
    assert not fixed, f"fixed, remove from ALLOWED_POSITIONAL_CALLS: {fixed}"
