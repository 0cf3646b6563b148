"""The released paraphrased SQuAD test sets of Gan & Ng (2019), when present.

They live in ``<project root>/../shared/data/paraphrasing-squad``; every test here is skipped when
that folder is absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tasks.io.squad import read_squad, write_squad

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
DATA = SHARED / "data" / "paraphrasing-squad"
COUNTS = {"dev": 1062, "adv": 56}
FILES = [f"{split}_{kind}.json" for split in COUNTS for kind in ("orig", "para")]


def released(name: str) -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent")
    path = DATA / name
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    return path


@pytest.mark.parametrize("name", FILES)
def test_reads_and_writes_back_unchanged(tmp_path, name):
    path = released(name)
    ds = read_squad(path)
    assert ds.version == "1.1"
    assert len(ds) == COUNTS[name.split("_")[0]]
    assert len(ds.by_id()) == len(ds)
    out = write_squad(tmp_path / name, ds)
    with open(path, encoding="utf-8") as original, open(out, encoding="utf-8") as rewritten:
        assert json.load(original) == json.load(rewritten)
    # The key order per object survives too (the paraphrased sets put qas before context).
    assert json.dumps(json.loads(out.read_text(encoding="utf-8"))) == path.read_text("utf-8")
    assert [list(p) for a in ds.raw["data"] for p in a["paragraphs"]][0] == ["qas", "context"]


@pytest.mark.parametrize("split", list(COUNTS))
def test_orig_and_para_are_parallel(split):
    orig = list(read_squad(released(f"{split}_orig.json")).questions())
    para = list(read_squad(released(f"{split}_para.json")).questions())
    assert len(orig) == len(para) == COUNTS[split]
    # The two files pair up by position: same titles, contexts and gold answers, a different
    # question. The released ids are NOT shared: the paraphrase's id is the original's minus 1
    # (orig 106201 <-> para 106200), so the id sets overlap in all but one id.
    for o, p in zip(orig, para, strict=True):
        assert (o.title, o.context, o.answers) == (p.title, p.context, p.answers)
        assert o.question != p.question
        assert int(p.id) == int(o.id) - 1
    assert len({q.id for q in orig} & {q.id for q in para}) == COUNTS[split] - 1
