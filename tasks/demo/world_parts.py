"""The demo world's two halves, by what they write under the raw root (no imports: the stage
registry reads these names). The retrieval study's sources (Sciavolino et al.: T-REx,
Wikidata labels, hyperlink counts, passages, NQ) and the reading study's (Gan & Ng: SQuAD,
PPDB, Quora, WikiAnswers) are written by two stages side by side; nothing of one half is read
by the other, and each draws from its own seeded streams (``tasks.demo.generate``)."""

from __future__ import annotations

#: Directories each half writes, relative to the raw root (``SourcesConfig``'s defaults).
OUTPUTS: dict[str, tuple[str, ...]] = {
    "retrieval": ("trex", "wikidata", "hyperlinks", "wikipedia", "nq"),
    "reading": ("squad", "ppdb", "quora", "wikianswers"),
}
#: The manifest each half writes beside its files, relative to the raw root.
MANIFESTS: dict[str, str] = {"retrieval": "manifest.retrieval.json",
                             "reading": "manifest.reading.json"}
