"""A stage's code dependencies: the project files its flow module imports, transitively.

A static walk over the AST (nothing is imported): every ``import`` and ``from ... import`` of a
project package (``flows``, ``tasks``, ``models``) anywhere in a module (lazy imports inside
functions count), plus ``importlib.import_module`` calls with a literal name. Importing
``a.b.c`` runs ``a/__init__.py`` and ``a/b/__init__.py`` too, so those are dependencies as well.
Code that does not run when the flow is imported is skipped: ``if __name__ == "__main__":`` and
``if TYPE_CHECKING:`` blocks. A package that loads names lazily (PEP 562 ``__getattr__``)
declares them in its ``TYPE_CHECKING`` block (``from a.b.api import load``): ``from a.b import
load`` then depends on ``a/b/api.py``. Every package reached brings its package data: the files
under its directory matched by ``[tool.setuptools.package-data]`` of ``pyproject.toml`` (e.g.
``tasks/demo/data/*.json``), outside its sub-packages.

Not seen: a lazily loaded name reached as an attribute (``import a.b`` then ``a.b.load``) and
imports by computed names; declare such a module with a plain import where it is used.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

PROJECT_PACKAGES = ("flows", "tasks", "models")


def module_file(root: Path, module: str) -> Path | None:
    """The source file of a project module (``a/b.py`` or ``a/b/__init__.py``), if any."""
    base = root.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _is_main_guard(node: ast.AST) -> bool:
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    test = node.test
    names = [test.left, *test.comparators]
    return (any(isinstance(n, ast.Name) and n.id == "__name__" for n in names)
            and any(isinstance(n, ast.Constant) and n.value == "__main__" for n in names))


def _is_type_checking(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return ((isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
            or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _statements(tree: ast.AST) -> Iterator[ast.AST]:
    """Every statement of ``tree`` (nested bodies included) except the bodies of ``__main__``
    and ``TYPE_CHECKING`` guards (their ``else`` branches run, so they are walked)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if _is_main_guard(node) or _is_type_checking(node):
            stack.extend(node.orelse)  # type: ignore[attr-defined]
            continue
        yield node
        stack.extend(child for child in ast.iter_child_nodes(node)
                     if isinstance(child, ast.stmt | ast.excepthandler | ast.match_case))


def _import_module_calls(tree: ast.AST) -> Iterator[str]:
    """Literal names passed to ``importlib.import_module`` in the statements of ``tree``."""
    expressions = (child for statement in _statements(tree)
                   for child in ast.iter_child_nodes(statement)
                   if not isinstance(child, ast.stmt | ast.excepthandler | ast.match_case))
    for node in (inner for expression in expressions for inner in ast.walk(expression)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "import_module" and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)):
            yield node.args[0].value


def _base(node: ast.ImportFrom, package: str) -> str:
    """The absolute module of a ``from ... import`` (relative ones resolved in ``package``)."""
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    anchor = ".".join(parts[:len(parts) - node.level + 1])
    return f"{anchor}.{node.module}" if node.module else anchor


def imported_names(source: str, module: str, is_package: bool, filename: str = "<source>"
                   ) -> set[str]:
    """Dotted names a module imports (modules, or ``package.attribute`` for ``from`` imports).

    ``module`` and ``is_package`` resolve relative imports (``from . import x``).
    """
    found: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]
    tree = ast.parse(source, filename=filename)
    for node in _statements(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _base(node, package)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    if "import_module" in source:
        found.update(_import_module_calls(tree))
    return found


@functools.lru_cache(maxsize=4096)
def _file_imports(path: Path, module: str, is_package: bool, mtime_ns: int, size: int
                  ) -> frozenset[str]:
    """:func:`imported_names` of a file, cached by its modification time and size."""
    return frozenset(imported_names(path.read_text(encoding="utf-8"), module, is_package,
                                    str(path)))


def lazy_exports(source: str, package: str, filename: str = "<source>") -> dict[str, str]:
    """Names a package ``__init__`` imports only under ``TYPE_CHECKING`` -> their modules."""
    exports: dict[str, str] = {}
    for node in ast.parse(source, filename=filename).body:
        if not _is_type_checking(node):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.ImportFrom):
                base = _base(inner, package)
                exports.update({alias.asname or alias.name: base for alias in inner.names})
    return exports


def package_data_patterns(root: Path) -> dict[str, list[str]]:
    """``[tool.setuptools.package-data]`` of ``root/pyproject.toml`` ({} when absent)."""
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        return {}
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    return dict(config.get("tool", {}).get("setuptools", {}).get("package-data", {}))


def _matches(relative: str, patterns: Sequence[str]) -> bool:
    """setuptools-style glob match (``**/`` may match no directory at all)."""
    return any(fnmatch.fnmatchcase(relative, p)
               or (p.startswith("**/") and fnmatch.fnmatchcase(relative, p[3:]))
               for p in patterns)


def package_data(root: Path, package_dir: Path, patterns: Mapping[str, Sequence[str]]
                 ) -> list[Path]:
    """Data files of one package directory (not those of its sub-packages)."""
    top = package_dir.relative_to(root).parts[0]
    globs = list(patterns.get(top, ())) + list(patterns.get("*", ()))
    if not globs:
        return []
    found: list[Path] = []
    stack = [package_dir]
    while stack:
        folder = stack.pop()
        for entry in sorted(folder.iterdir()):
            if entry.is_dir():
                if entry.name != "__pycache__" and not (entry / "__init__.py").is_file():
                    stack.append(entry)
            elif entry.suffix != ".py" and _matches(
                    entry.relative_to(root / top).as_posix(), globs):
                found.append(entry)
    return found


def _lazy_source(root: Path, name: str) -> list[str]:
    """The module a package loads ``package.attribute`` from lazily ([] if not lazy)."""
    package, _, attribute = name.rpartition(".")
    init = root.joinpath(*package.split("."), "__init__.py")
    if not package or not init.is_file():
        return []
    found = lazy_exports(init.read_text(encoding="utf-8"), package, str(init)).get(attribute)
    return [found] if found else []


def code_deps(module: str, root: Path,
              patterns: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """Project files (POSIX paths relative to ``root``, sorted) that ``module`` imports,
    transitively, with the package data of every package reached."""
    if module_file(root, module) is None:
        raise ModuleNotFoundError(f"{module}: no such project module under {root}")
    if patterns is None:
        patterns = package_data_patterns(root)
    files: set[Path] = set()
    seen: set[str] = set()
    queue = [module]
    while queue:
        name = queue.pop()
        parts = name.split(".")
        if parts[0] not in PROJECT_PACKAGES:
            continue
        for depth in range(1, len(parts) + 1):
            prefix = ".".join(parts[:depth])
            if prefix in seen:
                continue
            seen.add(prefix)
            path = module_file(root, prefix)
            if path is None:  # an attribute imported from a module: lazily loaded?
                queue.extend(_lazy_source(root, prefix))
                continue
            files.add(path)
            is_package = path.name == "__init__.py"
            if is_package:
                files.update(package_data(root, path.parent, patterns))
            stat = path.stat()
            queue.extend(_file_imports(path.resolve(), prefix, is_package, stat.st_mtime_ns,
                                       stat.st_size))
    return sorted(p.relative_to(root).as_posix() for p in files)
