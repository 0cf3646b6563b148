"""Code dependencies by a static import walk: a synthetic project tree with every import form."""

from __future__ import annotations

from pathlib import Path

import pytest

from tasks.pipeline.code_deps import code_deps, imported_names, lazy_exports


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def project(tmp_path) -> Path:
    return _tree(tmp_path, {
        "pyproject.toml": '[tool.setuptools.package-data]\n"tasks" = ["**/*.json"]\n',
        "flows/__init__.py": "",
        "flows/stage.py": (
            "import os\n"
            "from tasks.a import helper\n"
            "from tasks import b\n"
            "import tasks.c.deep\n"
            "def run():\n"
            "    from models.lazy import load  # lazy, via the package's __getattr__\n"
            "    import importlib\n"
            "    importlib.import_module('tasks.dynamic')\n"
            "if __name__ == '__main__':\n"
            "    import tasks.main_only\n"),
        "flows/cli.py": "import tasks.unused\n",
        "tasks/__init__.py": "",
        "tasks/a.py": "from .rel import x\ndef helper(): ...\n",
        "tasks/rel.py": "x = 1\n",
        "tasks/b/__init__.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                               "    import tasks.typing_only\n",
        "tasks/b/data/words.json": "[]",
        "tasks/b/notes.md": "not package data",
        "tasks/c/__init__.py": "",
        "tasks/c/deep.py": "from ..rel import x\n",
        "tasks/c/sub/__init__.py": "",
        "tasks/c/sub/own.json": "{}",
        "tasks/dynamic.py": "",
        "tasks/main_only.py": "",
        "tasks/typing_only.py": "",
        "tasks/unused.py": "",
        "models/__init__.py": "",
        "models/lazy/__init__.py": (
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from models.lazy.api import load\n"
            "def __getattr__(name): ...\n"),
        "models/lazy/api.py": "import models.lazy.net\n",
        "models/lazy/net.py": "",
        "models/lazy/unused.py": "",
    })


def test_walk_follows_every_import_form(project):
    assert code_deps("flows.stage", project) == [
        "flows/__init__.py", "flows/stage.py",
        "models/__init__.py", "models/lazy/__init__.py", "models/lazy/api.py",
        "models/lazy/net.py",
        "tasks/__init__.py", "tasks/a.py",
        "tasks/b/__init__.py", "tasks/b/data/words.json",
        "tasks/c/__init__.py", "tasks/c/deep.py",
        "tasks/dynamic.py", "tasks/rel.py",
    ]


def test_an_edit_of_a_new_import_changes_the_deps(project):
    before = code_deps("flows.stage", project)
    (project / "tasks" / "rel.py").write_text("import tasks.unused\n", encoding="utf-8")
    assert code_deps("flows.stage", project) == sorted([*before, "tasks/unused.py"])


def test_unknown_module_is_an_error(project):
    with pytest.raises(ModuleNotFoundError, match="flows.nope"):
        code_deps("flows.nope", project)


def test_imported_names_resolves_relative_imports():
    names = imported_names("from . import x\nfrom ..y import z\nimport q.r\n", "p.s.m",
                           is_package=False)
    assert names == {"p.s", "p.s.x", "p.y", "p.y.z", "q.r"}
    assert imported_names("from . import x\n", "p.s", is_package=True) == {"p.s", "p.s.x"}


def test_lazy_exports_read_the_type_checking_block():
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
              "    from pkg.api import load as fetch, save\n    from .net import Net\n")
    assert lazy_exports(source, "pkg") == {"fetch": "pkg.api", "save": "pkg.api",
                                           "Net": "pkg.net"}


def test_real_stages_depend_on_their_own_modules():
    root = Path(__file__).resolve().parents[2]
    deps = code_deps("flows.paraphrase", root)
    assert {"flows/paraphrase.py", "tasks/paraphrase/data/stopwords.txt",
            "models/paraphraser/network.py", "tasks/config.py"} <= set(deps)
    assert "flows/cli.py" not in deps  # only imported under `if __name__ == "__main__":`
    assert not any(d.startswith("tasks/paraphrase/") for d in code_deps("flows.bm25_index", root))
