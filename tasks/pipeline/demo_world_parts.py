"""The demo world's two halves, by what they write under the raw root (nothing but
``typing`` imported: the stage registry and the flows' missing-input hints read these names).
The retrieval study's sources (Sciavolino et al.: T-REx, Wikidata labels, hyperlink counts,
passages, NQ) and the reading study's (Gan & Ng: SQuAD, PPDB, Quora, WikiAnswers) are written
by two stages side by side; nothing of one half is read by the other, and each draws from its
own seeded streams (``tasks.demo.generate``)."""

from __future__ import annotations

from typing import Literal

#: The two halves.
WorldPart = Literal["retrieval", "reading"]
#: Directories each half writes, relative to the raw root (``SourcesConfig``'s defaults).
OUTPUTS: dict[str, tuple[str, ...]] = {
    "retrieval": ("trex", "wikidata", "hyperlinks", "wikipedia", "nq"),
    "reading": ("squad", "ppdb", "quora", "wikianswers"),
}
#: The ``qastress stage`` command of each half (``tasks.pipeline.stages``).
COMMANDS: dict[str, str] = {"retrieval": "demo-world", "reading": "demo-reading-world"}
#: The manifest each half writes beside its files, relative to the raw root.
MANIFESTS: dict[str, str] = {"retrieval": "manifest.retrieval.json",
                             "reading": "manifest.reading.json"}


def part_writing(relative: str) -> WorldPart | None:
    """The half that writes ``relative`` (a path or glob under the raw root: its first
    directory decides); None for a path of neither."""
    top = relative.replace("\\", "/").split("/")[0]
    return next((part for part, dirs in OUTPUTS.items() if top in dirs), None)
