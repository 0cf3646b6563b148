"""The offline Flair taggers of the demo world, as a pipeline step.

Gold NER/chunk sentences of the demo KB (:mod:`tasks.demo.tagging_sentences`) -> Flair column
corpus -> a NER and a chunk tagger (:func:`models.flair_training.train_tagger`), reused when
already trained from the same inputs. The paraphrase flow runs this step when no pretrained
Flair taggers are named (``paraphrase.ner_tagger`` / ``chunk_tagger``) on the demo world.
"""

from __future__ import annotations

import json
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from multiprocessing import current_process, get_context
from pathlib import Path
from typing import Any

from models.flair_training import QUICK_CONFIGS, TaggerTrainConfig, TrainedTagger, train_tagger
from tasks.config import DemoWorldConfig
from tasks.demo.tagging_sentences import build_demo_tagging_corpus
from tasks.io.atomic import write_json
from tasks.orchestration import artifact_task
from tasks.paraphrase.tagging_corpus import CHUNK_TAG_TYPE, NER_TAG_TYPE

#: Corpus options to go with :data:`QUICK_CONFIGS`: small dev/test splits (fast evaluation),
#: capped so that they stop growing with the world. The quick taggers train on 300-400
#: sentences and re-tag the dev split after every epoch: at the 51,770-passage world's 242k
#: sentences the uncapped shares (7,240 dev, 24,277 test, 210,559 train written to disk)
#: made that evaluation ~80 % of a tagger's training. The caps sit just above the demo
#: world's own splits (39,835 / 1,408 / 4,591), which they leave as they are.
QUICK_CORPUS_OPTIONS: dict[str, Any] = {"dev_share": 0.03, "test_share": 0.1,
                                        "max_train": 40_000, "max_dev": 1_500,
                                        "max_test": 5_000}


@dataclass(frozen=True)
class DemoTaggers:
    """The offline NER and chunk taggers of a demo world and the corpus they were trained on."""

    corpus_dir: Path
    ner: TrainedTagger
    chunk: TrainedTagger


def _read_trained(out_dir: Path) -> TrainedTagger:
    scores = json.loads((out_dir / "scores.json").read_text(encoding="utf-8"))
    return TrainedTagger(out_dir / "final-model.pt", scores["tag_type"], scores["test_micro_f1"],
                         scores["dev_micro_f1"], tuple(scores["labels"]))


def _train_on_disk(corpus_dir: Path, tag_type: str, out_dir: Path,
                   config: TaggerTrainConfig) -> TrainedTagger:
    """:func:`train_tagger` in a worker process: the result without the in-memory model."""
    return replace(train_tagger(corpus_dir, tag_type, out_dir, config), tagger=None)


def train_side_by_side(corpus_dir: Path, out_dir: Path,
                       configs: dict[str, TaggerTrainConfig]) -> list[TrainedTagger]:
    """The NER tagger (here) and the chunk tagger (in a spawned process) trained at the same
    time, each into ``out_dir/<tag type>``; ``[ner, chunk]``.

    Each training seeds itself (``flair.set_seed``) and uses its own torch threads, so its
    model and scores are those of a training on its own; two single-threaded trainings fill
    two cores. Trainings on more than one thread each, or in a daemonic task-runner worker
    (which may not start processes), run one after the other.
    """
    if current_process().daemon or any(configs[t].threads != 1 for t in configs):
        return [train_tagger(corpus_dir, t, out_dir / t, configs[t])
                for t in (NER_TAG_TYPE, CHUNK_TAG_TYPE)]
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
        chunk = pool.submit(_train_on_disk, corpus_dir, CHUNK_TAG_TYPE,
                            out_dir / CHUNK_TAG_TYPE, configs[CHUNK_TAG_TYPE])
        ner = train_tagger(corpus_dir, NER_TAG_TYPE, out_dir / NER_TAG_TYPE,
                           configs[NER_TAG_TYPE])
        return [ner, chunk.result()]


def train_demo_taggers(demo_config: Any, out_dir: str | Path,
                       configs: dict[str, TaggerTrainConfig] | None = None,
                       corpus_options: dict[str, Any] | None = None,
                       reuse: bool = True) -> DemoTaggers:
    """Build the gold corpus of a demo world (``tasks.config.DemoWorldConfig``) under
    ``out_dir/corpus`` and train ``out_dir/ner`` and ``out_dir/chunk`` on it.

    With ``reuse``, taggers already trained in ``out_dir`` from the same inputs (world config,
    corpus options, train configs; recorded in ``out_dir/inputs.json``) are read back instead.
    """
    out_dir = Path(out_dir)
    configs = {NER_TAG_TYPE: TaggerTrainConfig(), CHUNK_TAG_TYPE: TaggerTrainConfig(),
               **(configs or {})}
    inputs = {
        "demo_world": demo_config.model_dump(mode="json"),
        "corpus_options": corpus_options or {},
        "configs": {k: v.model_dump(mode="json") for k, v in sorted(configs.items())},
    }
    inputs_file = out_dir / "inputs.json"
    tag_types = (NER_TAG_TYPE, CHUNK_TAG_TYPE)
    if (reuse and inputs_file.is_file()
            and json.loads(inputs_file.read_text(encoding="utf-8")) == inputs
            and all((out_dir / t / name).is_file() for t in tag_types
                    for name in ("final-model.pt", "scores.json"))):
        return DemoTaggers(out_dir / "corpus", *(_read_trained(out_dir / t) for t in tag_types))
    inputs_file.unlink(missing_ok=True)
    corpus_dir = out_dir / "corpus"
    build_demo_tagging_corpus(demo_config, corpus_dir, **(corpus_options or {}))
    trained = train_side_by_side(corpus_dir, out_dir, configs)
    write_json(inputs_file, inputs, indent=2)
    return DemoTaggers(corpus_dir, *trained)


def train_taggers(demo_config: DemoWorldConfig, out_dir: Path,
                  quick: bool = False) -> dict[str, Any]:
    """Train the offline Flair NER and chunk taggers on the demo world's gold sentences
    (:func:`train_demo_taggers`); their model paths and test F1."""
    trained = train_demo_taggers(demo_config, out_dir, QUICK_CONFIGS if quick else None,
                                 QUICK_CORPUS_OPTIONS if quick else None)
    return {"ner": str(trained.ner.model_path), "chunk": str(trained.chunk.model_path),
            "ner_test_f1": trained.ner.test_f1, "chunk_test_f1": trained.chunk.test_f1}


train_taggers_task = artifact_task(train_taggers, outputs=("out_dir",), name="train taggers")
