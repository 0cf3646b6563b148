"""Helpers of the paraphrase tests (a uniquely named module, imported by the tests and by
``conftest.py``): a hand-made world of PPDB rules, SQuAD dev questions, Quora and WikiAnswers
pairs, written in their real formats by the project's writers, small enough to check by hand;
and a stub sentence embedder with exact similarities."""

from __future__ import annotations

from pathlib import Path

from tasks.io.ppdb import PPDBRule, write_ppdb_rules
from tasks.io.quora import QuoraPair, write_quora_pairs
from tasks.io.squad import build_squad, write_squad
from tasks.io.wikianswers import WikiAnswersPair, write_wikianswers_pairs

PROJECT_ROOT = Path(__file__).resolve().parents[2]

#: (phrase, paraphrase, PPDB2.0Score, LHS). Scores at and below 0.25 must be dropped.
RULES = [
    ("capital city", "capital", 3.1, "[NP]"),
    ("capital city", "main city", 2.0, "[NP]"),
    ("capital", "principal", 1.1, "[NN]"),
    ("wrote", "authored", 3.5, "[VBD]"),
    ("wrote", "penned", 2.8, "[VBD]"),
    ("novel", "book", 3.0, "[NN]"),
    ("built", "constructed", 3.7, "[VBN]"),
    ("built", "erected", 2.2, "[VBN]"),
    ("built", "constructed", 1.0, "[VBD]"),  # same pair under another LHS: best score wins
    ("famous", "well-known", 3.3, "[JJ]"),
    ("famous", "renowned", 2.9, "[JJ]"),
    ("big", "large", 3.6, "[JJ]"),
    ("live", "reside", 2.5, "[VBP]"),
    ("fast", "quick", 3.1, "[JJ]"),
    ("fast", "rapid", 0.2, "[JJ]"),          # below the threshold
    ("born", "birth", 0.25, "[VBN]"),        # exactly the threshold: not above, dropped
    ("born", "delivered", 0.2501, "[VBN]"),  # just above: kept
    ("author", "writer", 3.2, "[NN]"),
    ("the author", "the writer", 2.4, "[NP]"),
    ("makes", "produces", 2.7, "[VBZ]"),
    ("city", "city", 4.0, "[NN]"),           # identical: dropped
    ("the [NN,1] of", "[NN,1] 's", 3.0, "[NP/NN]"),  # syntactic non-terminals: dropped
    ("what", "which", 2.0, "[WP]"),          # a stop word: never looked up as a unigram
    ("how many", "what number of", 1.5, "[WHADJP]"),
    ("france", "french republic", 1.2, "[NNP]"),
]

#: (title, context, question id, question, answer text).
SQUAD = [
    ("Cities", "Paris is the capital city of France and its largest city. Berlin is the "
     "capital city of Germany.", "q1",
     "What is the capital city of France?", "Paris"),
    ("Books", "Moby Dick is a novel that Herman Melville wrote in 1851.", "q2",
     "Who wrote the novel Moby Dick?", "Herman Melville"),
    ("Bridges", "The famous bridge was built in 1890 over the river.", "q3",
     "When was the famous bridge built?", "1890"),
    ("Cities", "About nine million people live in the big city of London.", "q4",
     "How many people live in the big city?", "About nine million"),
    ("Cars", "Acme Motors makes the fast car that won the race.", "q5",
     "Which company makes the fast car?", "Acme Motors"),
    ("Authors", "The author was born in Dublin in 1882.", "q6",
     "Where was the author born?", "Dublin"),
    ("Misc", "Zebras are striped.", "q7", "Are zebras striped?", "striped"),
]

QUORA = [
    ("How do I learn Python quickly?",
     "What is the best way to learn Python programming language?", True),
    ("What is the capital city of France?", "Which city is the French capital?", True),
    ("How can I lose weight fast?", "What are good diet tips for quick weight loss?", True),
    ("Why is the sky blue?", "What makes the sky look blue during the day?", True),
    ("How do I learn Python quickly?", "How do I cook rice?", False),
    ("What is the best smartphone to buy?", "Which mobile phone should I purchase today?", True),
    ("Who wrote the novel Moby Dick?", "Who is the author of Moby Dick?", True),
]

WIKIANSWERS = [
    ("what is the capital city of the country france ?",
     "which city is the french capital in the european union ?"),
    ("what is the capital city of the country france ?",
     "name the main city of the country france and its capital ?"),
    ("what is the capital city of the country france ?",
     "what is the seat of government of the country france ?"),
    ("how many people live in the big city of london ?",
     "what is the population of the large city of london ?"),
    ("who is the author of the novel moby dick ?",
     "who wrote the famous book called moby dick in 1851 ?"),
    ("when was the famous bridge over the river built ?",
     "in what year was the renowned bridge over the river constructed ?"),
    ("short question here ?", "a short one ?"),  # under 7 tokens: dropped
]


def align(question1: str, question2: str) -> tuple[tuple[int, int], ...]:
    """Identical words aligned left to right (each source token used once)."""
    source = question1.split()
    used: set[int] = set()
    pairs = []
    for j, word in enumerate(question2.split()):
        for i, candidate in enumerate(source):
            if i not in used and candidate == word:
                used.add(i)
                pairs.append((i, j))
                break
    return tuple(pairs)


def write_mini_world(raw: Path, sources) -> None:
    """Write the hand-made world where ``sources`` (``params.sources``) expects its files."""
    rules = [PPDBRule(lhs, phrase, para, {"PPDB2.0Score": str(score), "Identity": "0"},
                      ((0, 0),), "Equivalence") for phrase, para, score, lhs in RULES]
    write_ppdb_rules(raw / sources.ppdb, rules)
    articles: dict[str, list] = {}
    for title, context, qid, question, answer in SQUAD:
        articles.setdefault(title, []).append((context, [(qid, question, [(answer, None)])]))
    write_squad(raw / sources.squad_dev, build_squad("1.1", list(articles.items())))
    write_quora_pairs(raw / sources.quora, [
        QuoraPair(i, 2 * i + 1, 2 * i + 2, q1, q2, dup)
        for i, (q1, q2, dup) in enumerate(QUORA)])
    write_wikianswers_pairs(raw / sources.wikianswers, [
        WikiAnswersPair(q1, q2, align(q1, q2)) for q1, q2 in WIKIANSWERS])


class StubEmbedder:
    """Texts -> fixed unit vectors, so cosine similarities are exactly what a test sets.

    ``similar[(a, b)] = s`` puts ``b`` at cosine ``s`` from ``a`` (``a`` on the first axis);
    every other text gets its own orthogonal axis.
    """

    def __init__(self, similar: dict[tuple[str, str], float]):
        import numpy as np

        self.np = np
        self.similar = similar
        texts = sorted({t for pair in similar for t in pair})
        self.axis = {t: i + 2 for i, t in enumerate(texts)}

    def _unit_complement(self, s: float) -> float:
        """``t`` with ``s*s + t*t == 1.0`` in floating point, so the norm is exactly 1 and the
        cosine is exactly ``s``."""
        np = self.np
        t = float(np.sqrt(1.0 - s * s))
        for _ in range(64):
            total = s * s + t * t
            if total == 1.0:
                return t
            t = float(np.nextafter(t, 0.0 if total > 1.0 else 2.0))
        raise AssertionError(f"no exact unit complement for {s}")

    def encode(self, texts: list[str]):
        np = self.np
        out = np.zeros((len(texts), len(self.axis) + 3))
        for row, text in enumerate(texts):
            for (a, b), s in self.similar.items():
                if text == a:
                    out[row, 0] = 1.0
                    break
                if text == b:
                    out[row, 0], out[row, 1] = s, self._unit_complement(s)
                    break
            else:
                out[row, self.axis.get(text, len(self.axis) + 2)] = 1.0
        return out


#: What the stub taggers label (the adversarial step's inputs on the mini world).
NER_LABELS = {"Paris": "GPE", "Berlin": "GPE", "France": "GPE", "Germany": "GPE",
              "London": "GPE", "Dublin": "GPE", "Herman Melville": "PERSON", "1890": "DATE",
              "1851": "DATE", "1882": "DATE"}
CHUNK_LABELS = {"the capital city": "NP", "its largest city": "NP", "is": "VP"}


class StubTagger:
    """A Flair-like tagger with fixed predictions: every token-aligned occurrence of a known
    phrase gets its label. Records the sentences it was asked to tag."""

    def __init__(self, label_type: str, phrases: dict[str, str],
                 whole: dict[str, str] | None = None):
        self.label_type = label_type
        self.phrases = phrases
        self.whole = whole or {}  # labels of sentences that are exactly this text
        self.calls: list[list[str]] = []

    def predict(self, sentences, mini_batch_size=32, **kwargs):
        self.calls.append([s.to_original_text() for s in sentences])
        for sentence in sentences:
            starts = {t.start_position: i for i, t in enumerate(sentence.tokens)}
            ends = {t.end_position: i for i, t in enumerate(sentence.tokens)}
            text = sentence.to_original_text()
            if text in self.whole:
                sentence[0:len(sentence)].add_label(self.label_type, self.whole[text])
            for phrase, label in self.phrases.items():
                at = text.find(phrase)
                while at >= 0:
                    first, last = starts.get(at), ends.get(at + len(phrase))
                    if first is not None and last is not None:
                        sentence[first:last + 1].add_label(self.label_type, label)
                    at = text.find(phrase, at + 1)



def stub_taggers() -> tuple[StubTagger, StubTagger]:
    """NER and chunk stubs for the mini world."""
    return StubTagger("ner", NER_LABELS), StubTagger("chunk", CHUNK_LABELS)
