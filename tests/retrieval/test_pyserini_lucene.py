"""Pyserini's LuceneSearcher without its neural query encoders (pyserini_lucene.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tasks.retrieval.pyserini_lucene import ENCODE, _stand_in_module

ROOT = Path(__file__).resolve().parents[2]

#: In a fresh process: the searcher class, what got imported, and a search of a tiny index.
SCRIPT = """
import json, sys
from pathlib import Path
from tasks.retrieval.jvm import start_jvm
from tasks.retrieval.pyserini_lucene import lucene_searcher_class
from tasks.retrieval.bm25 import build_bm25_index, export_collection, _bm25_search
start_jvm()
cls = lucene_searcher_class()
out = Path(sys.argv[1])
(out / "psgs.tsv").write_text("id\\ttext\\ttitle\\n1\\tAda was born in London.\\tAda\\n"
                              "2\\tBob was born in Leeds.\\tBob\\n", encoding="utf-8")
export_collection(out / "psgs.tsv", out / "collection")
build_bm25_index(out / "collection", out / "index", threads=1)
run = _bm25_search(out / "index", ["born in Leeds"], ["q1"], 2, 0.9, 0.4, 1, 10, "1g", False)
loaded = sorted(m for m in ("torch", "transformers", "faiss", "pyserini.encode")
                if m in sys.modules)
import pyserini.encode  # afterwards: the real module, not the stand-in
print(json.dumps({"class": f"{cls.__module__}.{cls.__name__}", "loaded": loaded,
                  "top": run["q1"][0][0],
                  "encode_later": getattr(pyserini.encode, "__file__", None) is not None}))
"""


def test_lucene_searcher_imports_no_torch_and_searches(tmp_path):
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"class": "pyserini.search.lucene._searcher.LuceneSearcher",
                      "loaded": [], "top": "2", "encode_later": True}


def test_stand_in_encoders_say_why_they_cannot_be_used():
    stand_in = _stand_in_module()
    from_import = stand_in.SpladeQueryEncoder  # what ``from pyserini.encode import X`` gets
    assert from_import.__module__ == ENCODE and from_import.__name__ == "SpladeQueryEncoder"
    with pytest.raises(RuntimeError, match=r"pyserini\.encode\.SpladeQueryEncoder was not "
                                           r"loaded: .* import pyserini\.encode before"):
        from_import("naver/splade")
