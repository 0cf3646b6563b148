"""Registry of the real public data sources that ``qastress data fetch <source>`` downloads.

Every file lands under ``<data>/raw/<source.dir>/``; ``dir`` and the file names are chosen so that
the fetched files sit where :class:`tasks.config.SourcesConfig` looks by default (e.g. DPR's
``biencoder-nq-train.json.gz`` is saved as ``nq/nq-train.json.gz`` and unpacked to
``nq/nq-train.json``).

Checksums: ``sha256=None`` means "not pinned here" (we do not invent checksums). After a download
the computed sha256 is printed; pin it by editing this file (or pass ``sha256=`` to
:func:`tasks.fetch.download`).
Sizes are rough, for the listing only.

Where each URL comes from (checked against the projects' own READMEs / download scripts):
- entityquestions: the princeton-nlp/EntityQuestions README (``wget .../dataset.zip``).
- squad: the SQuAD explorer site, as used by the official v1.1 download scripts.
- paraphrasing-squad: files ``datasets/{dev,adv}_{orig,para}.json`` in the GitHub repository
  nusnlp/paraphrasing-squad, served through raw.githubusercontent.com at ``HEAD`` (the default
  branch; its name was not confirmed, ``HEAD`` avoids depending on it).
- ppdb: ``http://nlpgrid.seas.upenn.edu/PPDB/eng/ppdb-2.0-<size>-<pack>.gz`` (paraphrase.org's
  download links; the host serves plain http).
- dpr-wikipedia, nq: ``RESOURCES_MAP`` of facebookresearch/DPR ``dpr/data/download_data.py``.
- trex: figshare article 5146864 ("T-REx: A Large Scale Alignment of Natural Language with
  Knowledge Base Triples"), full JSON release = ndownloader file 8760241.
- quora: Quora's first public dataset release (``qim.fs.quoracdn.net``, plain http).
- wikianswers: the Paralex page of Fader et al. (2013), ``wikianswers-paraphrases-1.0.tar.gz``
  (holds ``word_alignments.txt`` and ``questions.txt``).
- pyserini-dpr-nq, pyserini-bm25-dpr: ``FAISS_INDEX_INFO["wikipedia-dpr-100w.dpr-single-nq"]``
  and ``TF_INDEX_INFO["wikipedia-dpr-100w"]`` of pyserini 1.6.0
  (``pyserini/prebuilt_index_info.py``): their URLs, file names and md5s. Pyserini's own
  download of them does not resume; this one does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Extract = Literal["zip", "tar", "gz"]


@dataclass(frozen=True)
class RemoteFile:
    """One file of a source.

    ``dest`` is relative to the source directory. ``extract`` unpacks the download: ``zip``/``tar``
    into ``extract_to`` (relative to the source directory, default the directory itself), ``gz``
    to ``dest`` without ``.gz``. ``strip_components`` drops leading path parts of archive members.
    ``md5``: the checksum the publisher gives, where it gives no sha256 (Pyserini's indexes),
    checked on the same pass over the bytes as the sha256, before the file is renamed into place.
    """

    url: str
    dest: str
    sha256: str | None = None
    md5: str | None = None
    extract: Extract | None = None
    extract_to: str = "."
    strip_components: int = 0
    size: str = "?"


@dataclass(frozen=True)
class Source:
    """A named data source: a directory under ``data/raw`` and its files.

    ``files`` is either a tuple of :class:`RemoteFile` or a function of the fetch options (used by
    PPDB, whose size and packs are chosen by the user); ``options`` documents the defaults.
    """

    name: str
    description: str
    dir: str
    files: tuple[RemoteFile, ...] | Callable[..., tuple[RemoteFile, ...]]
    size: str = "?"
    homepage: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""
    options_for: Callable[[str], Mapping[str, str] | None] | None = None
    """The options that fetch a given file of the source (its name, packed or unpacked)."""

    def resolve_files(self, options: Mapping[str, Any] | None = None) -> tuple[RemoteFile, ...]:
        """The files to fetch for these options (unknown options are an error)."""
        opts = dict(self.options)
        extra = set(options or {}) - set(opts)
        if extra:
            raise ValueError(
                f"source {self.name!r} takes no option(s) {sorted(extra)}; "
                f"known options: {sorted(opts) or 'none'}"
            )
        opts.update(options or {})
        if callable(self.files):
            return tuple(self.files(**opts))
        return self.files


# --- PPDB -----------------------------------------------------------------------------------

PPDB_SIZES = ("s", "m", "l", "xl", "xxl", "xxxl")
PPDB_PACKS = ("lexical", "phrasal", "o2m", "m2o", "all")
PPDB_URL = "http://nlpgrid.seas.upenn.edu/PPDB/eng/ppdb-2.0-{size}-{pack}.gz"
# Rough compressed sizes of the lexical+phrasal packs, for the listing only.
_PPDB_SIZE_HINT = {"s": "~0.2 GB", "m": "~0.5 GB", "l": "~1 GB", "xl": "~3 GB",
                   "xxl": "~8 GB", "xxxl": "~20 GB"}


def ppdb_files(size: str = "s", packs: str | tuple[str, ...] = ("all",)) -> tuple[RemoteFile, ...]:
    """PPDB 2.0 English packs: ``size`` in s..xxxl, ``packs`` among lexical/phrasal/o2m/m2o/all.

    ``packs`` may be a comma-separated string (``"lexical,phrasal"``) as typed on a command line.
    """
    if size not in PPDB_SIZES:
        raise ValueError(f"PPDB size must be one of {PPDB_SIZES}, not {size!r}")
    chosen = tuple(p.strip() for p in packs.split(",")) if isinstance(packs, str) else packs
    bad = [p for p in chosen if p not in PPDB_PACKS]
    if bad or not chosen:
        raise ValueError(f"PPDB packs must be among {PPDB_PACKS}, not {list(chosen)!r}")
    return tuple(
        RemoteFile(url=PPDB_URL.format(size=size, pack=pack),
                   dest=f"ppdb-2.0-{size}-{pack}.gz", extract="gz",
                   size=_PPDB_SIZE_HINT[size] if pack == "all" else "?")
        for pack in chosen
    )


def ppdb_options_for(name: str) -> dict[str, str] | None:
    """The options that fetch the PPDB file ``name`` (``ppdb-2.0-xl-all``, ``.gz`` or not)."""
    match = re.fullmatch(rf"ppdb-2\.0-({'|'.join(PPDB_SIZES)})-({'|'.join(PPDB_PACKS)})(?:\.gz)?",
                         name)
    return {"size": match[1], "packs": match[2]} if match else None


# --- the registry ---------------------------------------------------------------------------

_DPR = "https://dl.fbaipublicfiles.com/dpr"
_PARA_SQUAD = "https://raw.githubusercontent.com/nusnlp/paraphrasing-squad/HEAD/datasets"
_PYSERINI = "https://rgw.cs.uwaterloo.ca/pyserini/indexes"
_PYSERINI_DPR_NQ = "faiss.wikipedia-dpr-100w.dpr_single-nq.20200115.cd5034.tar.gz"
_PYSERINI_BM25 = "lucene-index.wikipedia-dpr-100w.20210120.d1b9e6.tar.gz"

_BUILTIN: tuple[Source, ...] = (
    Source(
        name="entityquestions",
        description="EntityQuestions (Sciavolino et al., 2021): dataset/{train,dev,test}/P*.json "
                    "and the one-off sets",
        dir="entityquestions",
        files=(RemoteFile(url="https://nlp.cs.princeton.edu/projects/entity-questions/dataset.zip",
                          dest="dataset.zip", extract="zip", size="~25 MB"),),
        size="~25 MB",
        homepage="https://github.com/princeton-nlp/EntityQuestions",
    ),
    Source(
        name="squad",
        description="SQuAD v1.1 train and dev (Rajpurkar et al., 2016)",
        dir="squad",
        files=(
            RemoteFile(url="https://rajpurkar.github.io/SQuAD-explorer/dataset/train-v1.1.json",
                       dest="train-v1.1.json", size="~30 MB"),
            RemoteFile(url="https://rajpurkar.github.io/SQuAD-explorer/dataset/dev-v1.1.json",
                       dest="dev-v1.1.json", size="~5 MB"),
        ),
        size="~35 MB",
        homepage="https://rajpurkar.github.io/SQuAD-explorer/",
    ),
    Source(
        name="paraphrasing-squad",
        description="Gan & Ng (2019) paraphrased SQuAD dev questions: non-adversarial (dev_*) and "
                    "adversarial (adv_*) sets, original and paraphrased, SQuAD v1.1 JSON",
        dir="paraphrasing-squad",
        files=tuple(
            RemoteFile(url=f"{_PARA_SQUAD}/{name}.json", dest=f"{name}.json",
                       size="<1 MB")
            for name in ("dev_orig", "dev_para", "adv_orig", "adv_para")
        ),
        size="~2 MB",
        homepage="https://github.com/nusnlp/paraphrasing-squad",
    ),
    Source(
        name="ppdb",
        description="PPDB 2.0 English paraphrase packs (Pavlick et al., 2015); options: "
                    f"size={'|'.join(PPDB_SIZES)}, packs=comma list of {'|'.join(PPDB_PACKS)}",
        dir="ppdb",
        files=ppdb_files,
        options={"size": "s", "packs": "all"},
        options_for=ppdb_options_for,
        size="~0.2 GB (s) to 20+ GB (xxxl)",
        homepage="http://paraphrase.org/",
        note="served over plain http only; pin sha256 values after the first download",
    ),
    Source(
        name="dpr-wikipedia",
        description="DPR's Dec. 2018 English Wikipedia in 21M 100-word passages (psgs_w100.tsv)",
        dir="wikipedia",
        files=(RemoteFile(url=f"{_DPR}/wikipedia_split/psgs_w100.tsv.gz",
                          dest="psgs_w100.tsv.gz", extract="gz", size="~4.5 GB (13 GB unpacked)"),),
        size="~4.5 GB (13 GB unpacked)",
        homepage="https://github.com/facebookresearch/DPR",
    ),
    Source(
        name="nq",
        description="Natural Questions as released by DPR: retriever train/dev JSON and the "
                    "test question/answer file",
        dir="nq",
        files=(
            RemoteFile(url=f"{_DPR}/data/retriever/biencoder-nq-train.json.gz",
                       dest="nq-train.json.gz", extract="gz", size="~1 GB"),
            RemoteFile(url=f"{_DPR}/data/retriever/biencoder-nq-dev.json.gz",
                       dest="nq-dev.json.gz", extract="gz", size="~0.1 GB"),
            RemoteFile(url=f"{_DPR}/data/retriever/nq-test.qa.csv",
                       dest="nq-test.qa.csv", size="~0.3 MB"),
        ),
        size="~1.2 GB (several GB unpacked)",
        homepage="https://github.com/facebookresearch/DPR",
    ),
    Source(
        name="trex",
        description="T-REx (Elsahar et al., 2018): DBpedia abstracts aligned with Wikidata "
                    "triples, re-nlg_*.json",
        dir="trex",
        files=(RemoteFile(url="https://figshare.com/ndownloader/files/8760241",
                          dest="TREx.zip", extract="zip", size="several GB"),),
        size="several GB",
        homepage="https://hadyelsahar.github.io/t-rex/",
        note="figshare redirects to its storage host; the layout inside the zip was not checked "
             "here (sources.trex expects trex/*.json)",
    ),
    Source(
        name="quora",
        description="Quora Question Pairs (quora_duplicate_questions.tsv)",
        dir="quora",
        files=(RemoteFile(url="http://qim.fs.quoracdn.net/quora_duplicate_questions.tsv",
                          dest="quora_duplicate_questions.tsv", size="~60 MB"),),
        size="~60 MB",
        homepage="https://quoradata.quora.com/First-Quora-Dataset-Release-Question-Pairs",
    ),
    Source(
        name="wikianswers",
        description="WikiAnswers paraphrase corpus (Fader et al., 2013, Paralex): "
                    "word_alignments.txt and questions.txt",
        dir="wikianswers",
        files=(RemoteFile(
            url="http://knowitall.cs.washington.edu/paralex/wikianswers-paraphrases-1.0.tar.gz",
            dest="wikianswers-paraphrases-1.0.tar.gz", extract="tar", strip_components=1,
            size="several GB"),),
        size="several GB",
        homepage="http://knowitall.cs.washington.edu/paralex/",
        note="unpacks to wikianswers/word_alignments.txt (sources.wikianswers defaults to "
             "wikianswers/word_alignments.tsv: point it at the .txt for real data)",
    ),
    Source(
        name="pyserini-dpr-nq",
        description="Pyserini's prebuilt FAISS flat index of psgs_w100, encoded by DPR's NQ "
                    "context encoder (wikipedia-dpr-100w.dpr-single-nq): index + docid, for "
                    "retrieval.dense.prebuilt_index",
        dir="pyserini-dpr-nq",
        files=(RemoteFile(url=f"{_PYSERINI}/{_PYSERINI_DPR_NQ}",
                          dest=_PYSERINI_DPR_NQ, md5="01fb6bcaa047df254663d0a3d854b7cc",
                          extract="tar", strip_components=1,
                          size="~56 GB (65 GB unpacked)"),),
        size="~56 GB (65 GB unpacked)",
        homepage="https://github.com/castorini/pyserini",
        note="md5 as Pyserini publishes it; then --set "
             "retrieval.dense.prebuilt_index=data/raw/pyserini-dpr-nq (with "
             "--set retrieval.dense.model=facebook/dpr-question_encoder-single-nq-base)",
    ),
    Source(
        name="pyserini-bm25-dpr",
        description="Pyserini's prebuilt Lucene index of psgs_w100 (wikipedia-dpr-100w), for "
                    "retrieval.bm25.prebuilt_index and entity_questions.dpr_bm25_index",
        dir="pyserini-bm25-dpr",
        files=(RemoteFile(url=f"{_PYSERINI}/{_PYSERINI_BM25}", dest=_PYSERINI_BM25,
                          md5="7b58c08da992b2ea7e96667f0b176651", extract="tar",
                          strip_components=1, size="~8.5 GB"),),
        size="~8.5 GB",
        homepage="https://github.com/castorini/pyserini",
        note="md5 as Pyserini publishes it; then --set "
             "retrieval.bm25.prebuilt_index=data/raw/pyserini-bm25-dpr",
    ),
)

#: name -> Source. Tests and users may add entries with :func:`register_source`.
SOURCES: dict[str, Source] = {source.name: source for source in _BUILTIN}


def register_source(source: Source, *, replace: bool = False) -> Source:
    """Add a source to the registry (``replace=True`` to overwrite an existing name)."""
    if source.name in SOURCES and not replace:
        raise ValueError(f"source {source.name!r} is already registered")
    SOURCES[source.name] = source
    return source


class UnknownSource(LookupError):
    """No source of that name is registered; the message lists the known ones."""


def get_source(name: str) -> Source:
    """The registered source ``name``; an unknown name lists the known ones."""
    try:
        return SOURCES[name]
    except KeyError:
        raise UnknownSource(
            f"unknown data source {name!r}; known sources: {', '.join(sorted(SOURCES))}"
        ) from None
