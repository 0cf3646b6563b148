"""Benchmark of the retrieval answer matching (``tasks.evaluation.has_answer``).

Generates synthetic retrieval results -- QUESTIONS questions, each with K ranked passages drawn
(with a skew, so popular passages recur) from a pool of PASSAGES synthetic 100-word passages with
some accented / NFD / punctuated words -- and times two ways of computing the question x rank
"has answer" matrix in "string" mode:

* batch: ``has_answer_matrix`` (each distinct passage fetched and tokenised once, C-speed
  substring test per answer);
* naive: a straightforward transcription of DPR's ``has_answer``, question by question,
  re-normalising and re-tokenising every passage (and the answers) for every question and
  sliding a window over the tokens.

Both must give identical matrices (asserted). Prints questions/s for both, the speed-up and the
machine. Example: ``python bench/bench_evaluation.py --questions 10000 --passages 20000 --k 100``.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time
import unicodedata
from pathlib import Path

import regex

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tasks.evaluation.has_answer import has_answer_matrix  # noqa: E402
from tasks.evaluation.topk import first_hit_ranks, topk_accuracy  # noqa: E402

_DPR_TOKEN = regex.compile(
    r"([\p{L}\p{N}\p{M}]+)|([^\p{Z}\p{C}])",
    flags=regex.IGNORECASE + regex.UNICODE + regex.MULTILINE,
)
_SPECIAL_WORDS = [
    "Z\u00fcrich", "Zu\u0308rich", "Zurich", "U.S.", "São", "Paulo", "Kraków", "Beyoncé",
    "O'Brien", "e.g.,", "(born", "1990)", "–", "北京", "Ελλάδα", "naïve", "café", "St.",
]  # fmt: skip


def naive_has_answer(answers: list[str], text: str) -> bool:
    """DPR ``has_answer`` (string mode), re-tokenising everything on every call."""
    text = unicodedata.normalize("NFD", text)
    tokens = [m.group().lower() for m in _DPR_TOKEN.finditer(text)]
    for answer in answers:
        answer = unicodedata.normalize("NFD", answer)
        answer_tokens = [m.group().lower() for m in _DPR_TOKEN.finditer(answer)]
        for i in range(0, len(tokens) - len(answer_tokens) + 1):
            if answer_tokens == tokens[i : i + len(answer_tokens)]:
                return True
    return False


def naive_matrix(answers_per_question, ranked_ids, passages) -> list[list[bool]]:
    return [
        [naive_has_answer(answers, passages[pid][1]) for pid in ids]
        for answers, ids in zip(answers_per_question, ranked_ids, strict=True)
    ]


def make_vocabulary(rng: random.Random, size: int) -> list[str]:
    syllables = ["ka", "lo", "mi", "ren", "tas", "vo", "gel", "an", "ber", "du", "ix", "or", "sel"]
    words = {"".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(size)}
    vocabulary = sorted(words)
    vocabulary += [w.capitalize() for w in vocabulary[: len(vocabulary) // 5]]
    vocabulary += [",", ".", "the", "of", "in", "and", "a"] * 30 + _SPECIAL_WORDS * 3
    return vocabulary


def make_data(n_questions: int, n_passages: int, k: int, seed: int):
    rng = random.Random(seed)
    vocabulary = make_vocabulary(rng, 5000)
    weights = [1.0 / (rank + 1) for rank in range(len(vocabulary))]  # Zipf-like
    cum = [0.0] * len(weights)
    acc = 0.0
    for i, w in enumerate(weights):
        acc += w
        cum[i] = acc
    passages: dict[int, tuple[str, str]] = {}
    for pid in range(1, n_passages + 1):
        words = rng.choices(vocabulary, cum_weights=cum, k=100)
        passages[pid] = (" ".join(words[:2]).title(), " ".join(words))
    pool = list(passages)
    popular = pool[: max(1, n_passages // 10)]
    answers_per_question, ranked_ids = [], []
    for _ in range(n_questions):
        ids = [rng.choice(popular) if rng.random() < 0.3 else rng.choice(pool) for _ in range(k)]
        answers = []
        for _ in range(rng.randint(1, 3)):
            if rng.random() < 0.5:  # a phrase from one of the retrieved passages
                words = passages[rng.choice(ids)][1].split(" ")
                start = rng.randrange(len(words))
                answers.append(" ".join(words[start : start + rng.randint(1, 3)]))
            else:
                answers.append(" ".join(rng.choices(vocabulary, k=rng.randint(1, 3))))
        answers_per_question.append(answers)
        ranked_ids.append(ids)
    return answers_per_question, ranked_ids, passages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--questions", type=int, default=10_000, help="number of questions")
    parser.add_argument("--passages", type=int, default=20_000, help="size of the passage pool")
    parser.add_argument("--k", type=int, default=100, help="ranked passages per question")
    parser.add_argument(
        "--naive-questions",
        type=int,
        default=None,
        help="run the naive implementation on only the first N questions (default: all) and "
        "compare those rows; its questions/s is measured on them",
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed of the synthetic data")
    args = parser.parse_args(argv)
    if min(args.questions, args.passages, args.k) < 1:
        parser.error("--questions, --passages and --k must be >= 1")

    print(
        f"machine: {platform.platform()} | {platform.machine()} | "
        f"{platform.processor() or 'unknown cpu'} | cpus={os.cpu_count()} | "
        f"python {platform.python_version()}"
    )
    t0 = time.perf_counter()
    answers, ranked, passages = make_data(args.questions, args.passages, args.k, args.seed)
    distinct = len({pid for ids in ranked for pid in ids})
    print(
        f"data: {args.questions} questions x {args.k} passages from a pool of {args.passages} "
        f"({distinct} distinct retrieved), generated in {time.perf_counter() - t0:.1f}s"
    )

    t0 = time.perf_counter()
    batch = has_answer_matrix(answers, ranked, passages, mode="string")
    batch_s = time.perf_counter() - t0

    n_naive = (
        args.questions
        if args.naive_questions is None
        else min(args.naive_questions, args.questions)
    )
    t0 = time.perf_counter()
    naive = naive_matrix(answers[:n_naive], ranked[:n_naive], passages)
    naive_s = time.perf_counter() - t0

    assert naive == batch[:n_naive], "has_answer_matrix disagrees with the naive implementation"
    hits = sum(map(sum, batch))
    acc = topk_accuracy(first_hit_ranks(batch), [1, 5, 20, args.k])
    print(
        f"identical results on {n_naive} questions; {hits} answer-bearing (question, rank) "
        f"pairs; top-k accuracy {', '.join(f'@{k}={v:.3f}' for k, v in acc.items())}"
    )
    batch_qps = args.questions / batch_s
    naive_qps = n_naive / naive_s
    print(f"has_answer_matrix: {batch_s:8.2f}s  {batch_qps:10.1f} questions/s")
    print(f"naive per-question: {naive_s:7.2f}s  {naive_qps:10.1f} questions/s")
    print(f"speed-up: {batch_qps / naive_qps:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
