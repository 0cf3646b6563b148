"""How bold are the paraphrases? The flow's sets beside Gan & Ng's released ones.

For every paraphrased set in the given directories (``<name>_orig.json`` + ``<name>_para.json``,
the release layout) prints what its paraphrases change (:mod:`tasks.paraphrase.edits`): content
words changed per pair, pairs that change none, pairs that drop a question word found in the
answer's sentence, the overlap with that sentence before and after, and (flow sets, which have
a ``<name>_pairs.parquet``) how many paraphrases hold their suggestion. Example, from the root
of a demo run::

    python bench/paraphrase_edits.py data/paraphrasing-squad ../shared/data/paraphrasing-squad
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", type=Path, nargs="+",
                        help="directories of paraphrased sets (release layout)")
    args = parser.parse_args()

    from tasks.io.squad import discover_paraphrase_sets
    from tasks.paraphrase.edits import summarise_edits, summarise_release

    print("| set | pairs | changed content words | change none | drop a word of the answer's "
          "sentence | overlap orig -> para | hold their suggestion |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for directory in args.dirs:
        for name, (orig, para) in discover_paraphrase_sets(directory).items():
            pairs = orig.with_name(f"{name}_pairs.parquet")
            s = (summarise_edits(pairs, orig) if pairs.is_file()
                 else summarise_release(orig, para))
            n = s["pairs"]
            none = s["no_content_word_changed"]
            held = (f"{s['holds_suggestion']} of {s['with_suggestion']}"
                    if s["with_suggestion"] else "-")
            print(f"| {directory}/{name} | {n} | {s['changed_content_words']:.2f} | "
                  f"{none} ({100 * none / n:.0f} %) | "
                  f"{s['removes_answer_sentence_word']} "
                  f"({100 * s['removes_answer_sentence_word'] / n:.0f} %) | "
                  f"{s['answer_sentence_overlap_original']:.2f} -> "
                  f"{s['answer_sentence_overlap_paraphrase']:.2f} | {held} |")


if __name__ == "__main__":
    main()
