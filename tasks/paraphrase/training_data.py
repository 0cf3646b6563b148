"""Training triples (source question, suggestion, target question) for the paraphraser
(Gan & Ng, 2019, §3.2).

* **WikiAnswers** pairs whose questions both have at least ``min_tokens`` (7) tokens. The
  suggestion comes from the word alignment: maximal runs of target tokens that are not aligned
  to the source and whose words do not occur in it, trimmed of stop words and punctuation at
  both ends (longest first, then by position). A source with several targets gets a distinct
  suggestion per target, so no (source, suggestion) input has two targets; a pair left without
  one gets the empty suggestion if its source has none yet, and is dropped otherwise.
* **Quora** duplicate pairs, in both directions. The suggestion is the highest-ranked TextRank
  keyphrase of the target that is absent from the source (no word of it occurs in the
  source); keyphrases are runs of content words, so a suggestion is never a stop word. A target
  with no such keyphrase gets the empty suggestion.
* A seeded random share of the suggestions is replaced by the empty token :data:`NONE_TOKEN`
  (never two empty suggestions for one source), so the model also paraphrases without one.

Finally any input that would repeat is dropped (an exact duplicate triple, or the same input
with another target), and every step's counts are returned for the report. Text is lower-cased
with single spaces (the vocabulary is trained on the lower-cased data).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from tasks.io.errors import SkipCounter
from tasks.io.quora import iter_quora_pairs
from tasks.io.tables import read_table, write_table
from tasks.io.wikianswers import WikiAnswersPair, iter_wikianswers_pairs
from tasks.paraphrase.text import (
    NONE_TOKEN,
    is_content,
    load_stopwords,
    normalise_question,
    tokenize,
)

TRIPLES_SCHEMA = pa.schema([
    ("origin", pa.string()), ("source", pa.string()), ("suggestion", pa.string()),
    ("target", pa.string()),
])
_EDGE_PUNCT = "\"'`.,;:!?()[]{}<>«»“”‘’"


@dataclass(frozen=True, slots=True)
class Triple:
    """One training example. ``suggestion`` is :data:`NONE_TOKEN` when there is none."""

    source: str
    suggestion: str
    target: str
    origin: str = ""


# --- TextRank ------------------------------------------------------------------------------

def pagerank(graph: Mapping[str, Mapping[str, float]], damping: float = 0.85,
             tol: float = 1e-8, max_iter: int = 200) -> dict[str, float]:
    """Weighted PageRank by power iteration over an undirected ``{node: {neighbour: weight}}``.

    Dangling (isolated) nodes spread their rank evenly, so the scores sum to 1.
    """
    nodes = sorted(graph)
    if not nodes:
        return {}
    n = len(nodes)
    rank = dict.fromkeys(nodes, 1.0 / n)
    out_weight = {u: sum(graph[u].values()) for u in nodes}
    for _ in range(max_iter):
        dangling = sum(rank[u] for u in nodes if out_weight[u] == 0)
        new = {}
        for v in nodes:
            incoming = sum(rank[u] * w / out_weight[u] for u, w in graph[v].items())
            new[v] = (1 - damping) / n + damping * (incoming + dangling / n)
        delta = sum(abs(new[u] - rank[u]) for u in nodes)
        rank = new
        if delta < tol:
            break
    return rank


def textrank_keyphrases(tokens: Sequence[str], stopwords: frozenset[str] | None = None,
                        exclude: Iterable[str] = (), window: int = 2,
                        damping: float = 0.85) -> list[tuple[str, float]]:
    """TextRank (Mihalcea & Tarau, 2004) keyphrases of a token sequence, best first.

    Content words (not stop words, not punctuation) are the graph's nodes, linked when they
    occur within ``window`` positions of each other in the sequence of content words (edge
    weight = number of such co-occurrences); PageRank scores the words. Keyphrases are maximal
    runs of adjacent content words in the text, split at any word in ``exclude`` (the source's
    words), each scored by its best word; ties go to the longer, then the earlier phrase.
    """
    stopwords = load_stopwords() if stopwords is None else stopwords
    excluded = set(exclude)
    tokens = [t.lower() for t in tokens]
    content = [t for t in tokens if is_content(t, stopwords)]
    graph: dict[str, dict[str, float]] = {t: {} for t in content}
    for i, u in enumerate(content):
        for v in content[i + 1:i + window]:
            if u != v:
                graph[u][v] = graph[u].get(v, 0.0) + 1.0
                graph[v][u] = graph[v].get(u, 0.0) + 1.0
    scores = pagerank(graph, damping)
    phrases: dict[str, tuple[float, int, int]] = {}
    run: list[str] = []

    def close(position: int) -> None:
        if run:
            phrase = " ".join(run)
            key = (max(scores[w] for w in run), len(run), -position)
            if phrase not in phrases or key > phrases[phrase]:
                phrases[phrase] = key
            run.clear()

    for position, token in enumerate(tokens):
        if is_content(token, stopwords) and token not in excluded:
            run.append(token)
        else:
            close(position - len(run))
    close(len(tokens) - len(run))
    ranked = sorted(phrases.items(), key=lambda item: item[1], reverse=True)
    return [(phrase, key[0]) for phrase, key in ranked]


def quora_suggestion(source: str, target: str,
                     stopwords: frozenset[str] | None = None) -> str | None:
    """The best TextRank keyphrase of ``target`` with no word in ``source`` (None: none)."""
    phrases = textrank_keyphrases(tokenize(target), stopwords, exclude=set(tokenize(source)))
    return phrases[0][0] if phrases else None


# --- WikiAnswers alignments ----------------------------------------------------------------

def _word(token: str) -> str:
    return token.lower().strip(_EDGE_PUNCT)


def alignment_suggestions(pair: WikiAnswersPair,
                          stopwords: frozenset[str] | None = None) -> list[str]:
    """Target phrases absent from the source, from the word alignment; best first.

    A phrase is a maximal run of target tokens that are unaligned and whose words are not in
    the source, trimmed of stop words and punctuation at both ends. Longer phrases (in content
    words) come first, then earlier ones.
    """
    stopwords = load_stopwords() if stopwords is None else stopwords
    source_words = {_word(t) for t in pair.question1.split()}
    aligned = {j for _, j in pair.alignment}
    target = [_word(t) for t in pair.question2.split()]
    runs: list[list[str]] = []
    run: list[str] = []
    for j, word in enumerate(target):
        if j not in aligned and word and word not in source_words:
            run.append(word)
        else:
            if run:
                runs.append(run)
            run = []
    if run:
        runs.append(run)
    candidates: list[tuple[int, int, str]] = []
    for position, words in enumerate(runs):
        while words and not is_content(words[0], stopwords):
            words = words[1:]
        while words and not is_content(words[-1], stopwords):
            words = words[:-1]
        if words:
            n_content = sum(is_content(w, stopwords) for w in words)
            candidates.append((-n_content, position, " ".join(words)))
    seen: set[str] = set()
    ranked = []
    for _, _, phrase in sorted(candidates):
        if phrase not in seen:
            seen.add(phrase)
            ranked.append(phrase)
    return ranked


# --- building the triples ------------------------------------------------------------------

def wikianswers_triples(pairs: Iterable[WikiAnswersPair], min_tokens: int = 7,
                        stopwords: frozenset[str] | None = None,
                        counts: dict[str, int] | None = None) -> list[Triple]:
    """Triples from aligned pairs: length filter, alignment suggestions, distinct per source."""
    stopwords = load_stopwords() if stopwords is None else stopwords
    counts = {} if counts is None else counts
    used: dict[str, set[str]] = defaultdict(set)
    triples = []
    for pair in pairs:
        counts["wikianswers_pairs"] = counts.get("wikianswers_pairs", 0) + 1
        if min(len(pair.question1.split()), len(pair.question2.split())) < min_tokens:
            counts["wikianswers_too_short"] = counts.get("wikianswers_too_short", 0) + 1
            continue
        source, target = normalise_question(pair.question1), normalise_question(pair.question2)
        if source == target:
            counts["wikianswers_identical"] = counts.get("wikianswers_identical", 0) + 1
            continue
        taken = used[source]
        choice = next((s for s in alignment_suggestions(pair, stopwords) if s not in taken),
                      None)
        if choice is None:
            if NONE_TOKEN in taken:
                counts["wikianswers_no_distinct_suggestion"] = \
                    counts.get("wikianswers_no_distinct_suggestion", 0) + 1
                continue
            choice = NONE_TOKEN
            counts["wikianswers_no_suggestion"] = counts.get("wikianswers_no_suggestion", 0) + 1
        taken.add(choice)
        triples.append(Triple(source, choice, target, "wikianswers"))
    return triples


def quora_triples(pairs: Iterable[tuple[str, str]], stopwords: frozenset[str] | None = None,
                  counts: dict[str, int] | None = None) -> list[Triple]:
    """Triples from duplicate question pairs, both directions, TextRank suggestions."""
    stopwords = load_stopwords() if stopwords is None else stopwords
    counts = {} if counts is None else counts
    triples = []
    for question1, question2 in pairs:
        counts["quora_pairs"] = counts.get("quora_pairs", 0) + 1
        q1, q2 = normalise_question(question1), normalise_question(question2)
        if q1 == q2:
            counts["quora_identical"] = counts.get("quora_identical", 0) + 1
            continue
        for source, target in ((q1, q2), (q2, q1)):
            suggestion = quora_suggestion(source, target, stopwords)
            if suggestion is None:
                counts["quora_no_keyphrase"] = counts.get("quora_no_keyphrase", 0) + 1
                suggestion = NONE_TOKEN
            triples.append(Triple(source, suggestion, target, "quora"))
    return triples


def finalise_triples(triples: Iterable[Triple], none_share: float, seed: int,
                     counts: dict[str, int] | None = None) -> list[Triple]:
    """Drop repeated inputs, then replace a seeded share of suggestions by :data:`NONE_TOKEN`.

    Every triple draws one random number (so the choice does not depend on which triples come
    before it being dropped); a draw below ``none_share`` empties the suggestion unless its
    source already has an empty suggestion.
    """
    if not 0.0 <= none_share <= 1.0:
        raise ValueError(f"none_share must be within [0, 1], not {none_share}")
    counts = {} if counts is None else counts
    for key in ("duplicate_triples", "conflicting_inputs", "none_replaced"):
        counts.setdefault(key, 0)
    inputs: dict[tuple[str, str], str] = {}
    unique: list[Triple] = []
    for triple in triples:
        key = (triple.source, triple.suggestion)
        if key in inputs:
            counts["duplicate_triples" if inputs[key] == triple.target
                   else "conflicting_inputs"] += 1
            continue
        inputs[key] = triple.target
        unique.append(triple)
    rng = random.Random(seed)
    final = []
    for triple in unique:
        draw = rng.random()
        if (draw < none_share and triple.suggestion != NONE_TOKEN
                and (triple.source, NONE_TOKEN) not in inputs):
            inputs[(triple.source, NONE_TOKEN)] = triple.target
            del inputs[(triple.source, triple.suggestion)]
            triple = Triple(triple.source, NONE_TOKEN, triple.target, triple.origin)
            counts["none_replaced"] += 1
        final.append(triple)
    counts["triples"] = len(final)
    counts["triples_with_none"] = sum(t.suggestion == NONE_TOKEN for t in final)
    return final


def build_training_triples(wikianswers_path: Path | None, quora_path: Path | None,
                           out_path: Path, min_tokens: int = 7, none_share: float = 0.2,
                           seed: int = 2019, on_error: str = "raise",
                           max_wikianswers_pairs: int | None = None,
                           max_quora_pairs: int | None = None) -> dict[str, Any]:
    """Read both corpora, build the triples, write them as Parquet; return the counts.

    Either corpus may be ``None`` (not used). Malformed records raise
    :class:`~tasks.io.errors.DataFormatError`, or with ``on_error="skip"`` are counted
    (``wikianswers_skipped``, ``quora_skipped``).
    """
    stopwords = load_stopwords()
    counts: dict[str, Any] = {}
    triples: list[Triple] = []
    if wikianswers_path is not None:
        skips = SkipCounter(str(wikianswers_path))
        pairs = iter_wikianswers_pairs(wikianswers_path, on_error=on_error, skips=skips)
        triples += wikianswers_triples(_take(pairs, max_wikianswers_pairs), min_tokens,
                                       stopwords, counts)
        counts["wikianswers_skipped"] = skips.total
    if quora_path is not None:
        skips = SkipCounter(str(quora_path))
        pairs = iter_quora_pairs(quora_path, duplicates_only=True, on_error=on_error,
                                 skips=skips)
        triples += quora_triples(((p.question1, p.question2)
                                  for p in _take(pairs, max_quora_pairs)), stopwords, counts)
        counts["quora_skipped"] = skips.total
    final = finalise_triples(triples, none_share, seed, counts)
    if not final:
        raise ValueError("no training triples: check sources.wikianswers / sources.quora and "
                         f"the filters (counts: {counts})")
    write_table(out_path, [{"origin": t.origin, "source": t.source, "suggestion": t.suggestion,
                            "target": t.target} for t in final], schema=TRIPLES_SCHEMA)
    return counts


def read_triples(path: Path) -> list[Triple]:
    """The triples of a Parquet file written by :func:`build_training_triples`."""
    table = read_table(path).to_pydict()
    return [Triple(s, g, t, o) for o, s, g, t in zip(table["origin"], table["source"],
                                                      table["suggestion"], table["target"],
                                                      strict=True)]


def _take(items: Iterable[Any], limit: int | None) -> Iterable[Any]:
    if limit is None:
        yield from items
        return
    for i, item in enumerate(items):
        if i >= limit:
            return
        yield item

