"""Generate the demo world and write it, file by file, in the real formats: the retrieval
study's sources and the reading study's, each half on its own."""

from __future__ import annotations

import logging
import math
from pathlib import Path

from tasks.config import DemoWorldConfig, SourcesConfig
from tasks.demo.articles import Article, ArticleWriter
from tasks.demo.kb import build_world
from tasks.demo.lexical import BM25
from tasks.demo.nq import build_nq
from tasks.demo.paraphrase_resources import (
    alignment_rules,
    build_ppdb,
    build_quora,
    build_wikianswers,
)
from tasks.demo.passages import PassageRecord, split_articles
from tasks.demo.rng import stream
from tasks.demo.squad import build_squad_sets_with_subjects
from tasks.demo.trex import trex_chunks
from tasks.demo.world import Entity, World
from tasks.io.dpr import write_dpr_examples, write_qa_csv
from tasks.io.entity_labels import EntityLabel, write_entity_labels
from tasks.io.hyperlinks import write_hyperlink_counts
from tasks.io.linking import LinkedQuestion, write_linked_questions
from tasks.io.passages import Passage, write_passages
from tasks.io.ppdb import write_ppdb_rules
from tasks.io.quora import write_quora_pairs
from tasks.io.squad import write_squad
from tasks.io.trex_write import write_trex_documents
from tasks.io.wikianswers import write_wikianswers_pairs

log = logging.getLogger(__name__)

#: Where each output goes, relative to the raw root (the defaults of ``SourcesConfig``).
_SOURCES = SourcesConfig()
TREX_DIR = Path(_SOURCES.trex).parent
NQ_TEST = Path(_SOURCES.nq_train).parent / "nq-test.qa.csv"
#: The entity each NQ training question is about (linking interchange JSONL): linker truth.
NQ_TRAIN_ENTITIES = Path(_SOURCES.nq_train).parent / "nq-train.entities.jsonl"
_NEWS_TOPICS = {
    "music": lambda e: (e.cls == "person" and e.attrs.get("role") == "musician")
    or e.kind in ("band", "album", "song"),
    "literature": lambda e: (e.cls == "person" and e.attrs.get("role") == "writer")
    or e.kind == "book",
    "sports": lambda e: e.cls == "person" and e.attrs.get("role") == "athlete",
    "business": lambda e: (e.cls == "person" and e.attrs.get("role") == "entrepreneur")
    or e.kind in ("company", "product"),
    "art": lambda e: (e.cls == "person" and e.attrs.get("role") == "artist")
    or e.kind in ("painting", "character", "game"),
    "science": lambda e: e.cls == "person" and e.attrs.get("role") == "scientist",
    "politics": lambda e: e.cls == "person" and e.attrs.get("role") == "politician",
}


def _active_years(e: Entity) -> tuple[int, float]:
    """The first and last year in which ``e`` could be in the news (``inf``: no end)."""
    a = e.attrs
    if e.cls == "person":
        return a["birth_year"] + 18, a.get("death_year", 2023)
    return a.get("year", a.get("inception", 1800)), math.inf


def _active_in(spans: list[tuple[Entity, int, float]], year: int) -> list[Entity]:
    """The entities of ``spans`` (entity, first, last year) active in ``year``, in order."""
    return [e for e, first, last in spans if first <= year <= last]


def write_articles(world: World, config: DemoWorldConfig) -> list[Article]:
    """Subject articles, then city and news co-mention pages (one passage each)."""
    writer = ArticleWriter(world, stream(config.seed, "prose"))
    articles = [writer.subject_article(e) for e in world.subjects()]
    rng = stream(config.seed, "comention")
    n_city = config.n_comention_passages // 4
    indegree: dict[str, int] = {}
    for fact in world.facts:
        if world.entities[fact.object].kind == "city":
            indegree[fact.object] = indegree.get(fact.object, 0) + 1
    cities = sorted(indegree, key=lambda c: (-indegree[c], c))[:n_city]
    for city in cities:
        articles.append(writer.city_article(world.entities[city], config.passage_words))
    subjects = world.subjects()
    topics = sorted(_NEWS_TOPICS)
    # Each entity's years are worked out once: the pages below ask ~3.7M times for the
    # 51,770-passage world.
    by_topic = {topic: [(e, *_active_years(e)) for e in subjects if _NEWS_TOPICS[topic](e)]
                for topic in topics}
    people = [(e, *_active_years(e)) for e in subjects if e.cls == "person"]
    # The entities of a year (and of a home country or topic in that year) never change while
    # the pages are drawn: each list is built once, in the order of ``subjects``.
    people_active: dict[int, list[Entity]] = {}
    people_at_home: dict[int, dict[str, list[Entity]]] = {}  # year -> home -> people, in order
    topic_active: dict[tuple[str, int], list[Entity]] = {}
    titles: set[str] = set()
    for _ in range(config.n_comention_passages - len(cities)):
        for _attempt in range(20):
            year = rng.randint(1950, 2022)
            if rng.random() < 0.35:
                if year not in people_active:
                    people_active[year] = _active_in(people, year)
                    at_home: dict[str, list[Entity]] = {}
                    for e in people_active[year]:
                        at_home.setdefault(e.attrs["home_id"], []).append(e)
                    people_at_home[year] = at_home
                homes = people_active[year]
                if not homes:
                    continue
                code = rng.choice(homes).attrs["home_id"]
                title = f"{year} in {world.label(code)}"
                candidates = people_at_home[year][code]
            else:
                topic = rng.choice(topics)
                title = f"{year} in {topic}"
                if (topic, year) not in topic_active:
                    topic_active[topic, year] = _active_in(by_topic[topic], year)
                candidates = topic_active[topic, year]
            if candidates and title not in titles:
                titles.add(title)
                articles.append(writer.news_article(title, candidates, config.passage_words))
                break
    return articles


def generate_demo_world(config: DemoWorldConfig, raw_root: Path) -> dict[str, int]:
    """Write every raw input of the demo world under ``raw_root``; return records per file.

    Deterministic: the same seed and sizes give byte-identical files. Paths follow the defaults
    of :class:`tasks.config.SourcesConfig` (T-REx as ``trex/re-nlg_<start>-<end>.json``). The
    two halves (:func:`generate_retrieval_world`, :func:`generate_reading_world`) one after
    the other, over one knowledge base.
    """
    world = build_world(config)
    return {**generate_retrieval_world(config, raw_root, world),
            **generate_reading_world(config, raw_root, world)}


def generate_retrieval_world(config: DemoWorldConfig, raw_root: Path,
                             world: World | None = None) -> dict[str, int]:
    """The EntityQuestions study's sources (``tasks.pipeline.demo_world_parts``): T-REx documents,
    Wikidata labels, hyperlink counts, ``psgs_w100.tsv`` and the NQ-style sets; records per
    file. ``world``: the knowledge base of ``config`` when already built."""
    raw_root = Path(raw_root)
    seed = config.seed
    world = world if world is not None else build_world(config)
    articles = write_articles(world, config)
    passages = split_articles(articles, config.passage_words, stream(seed, "passages"))
    counts: dict[str, int] = {}

    # T-REx (stale chunks of an earlier, bigger world would be globbed too: remove them)
    trex_dir = raw_root / TREX_DIR
    written = []
    for name, documents in trex_chunks(articles, config.trex_docs_per_file):
        write_trex_documents(trex_dir / name, documents)
        counts[(TREX_DIR / name).as_posix()] = len(documents)
        written.append(name)
    for stale in sorted(trex_dir.glob("re-nlg_*.json")):
        if stale.name not in written:
            stale.unlink()

    entities = [EntityLabel(e.id, e.label, tuple(e.aliases), e.type, e.description or None)
                for e in world.entities.values()]
    write_entity_labels(raw_root / _SOURCES.entity_labels, entities)
    counts[_SOURCES.entity_labels] = len(entities)
    write_hyperlink_counts(raw_root / _SOURCES.hyperlink_counts,
                           {e.id: e.count for e in world.entities.values()})
    counts[_SOURCES.hyperlink_counts] = len(world.entities)
    counts[_SOURCES.passages] = write_passages(
        raw_root / _SOURCES.passages, (Passage(str(p.id), p.text, p.title) for p in passages))

    bm25 = BM25([f"{p.title} {p.text}" for p in passages])
    train, dev, test, truth = build_nq(world, passages,
                                (config.n_nq_train, config.n_nq_dev, config.n_nq_test),
                                stream(seed, "nq"), bm25)
    write_dpr_examples(raw_root / _SOURCES.nq_train, train)
    write_dpr_examples(raw_root / _SOURCES.nq_dev, dev)
    write_qa_csv(raw_root / NQ_TEST, test)
    write_linked_questions(raw_root / NQ_TRAIN_ENTITIES,
                           (LinkedQuestion(question, (subject,)) for question, subject in truth))
    counts[NQ_TRAIN_ENTITIES.as_posix()] = len(truth)
    counts[_SOURCES.nq_train], counts[_SOURCES.nq_dev] = len(train), len(dev)
    counts[NQ_TEST.as_posix()] = len(test)
    log.info("demo world (seed %d), retrieval sources: %d entities, %d facts, %d passages",
             seed, len(world.entities), len(world.facts), len(passages))
    return counts


def generate_reading_world(config: DemoWorldConfig, raw_root: Path,
                           world: World | None = None) -> dict[str, int]:
    """The paraphrase study's sources (``tasks.pipeline.demo_world_parts``): SQuAD-style
    train and dev sets (paragraphs of the world's own, not passages) with the dev
    questions' subjects, PPDB rules, Quora and WikiAnswers paraphrase pairs; records per
    file. ``world``: the knowledge base of ``config`` when already built."""
    raw_root = Path(raw_root)
    seed = config.seed
    world = world if world is not None else build_world(config)
    counts: dict[str, int] = {}
    squad_train, squad_dev, subjects = build_squad_sets_with_subjects(
        world, config.n_squad_train, config.n_squad_dev, config.passage_words,
        stream(seed, "squad"), seed)
    write_squad(raw_root / _SOURCES.squad_train, squad_train)
    write_squad(raw_root / _SOURCES.squad_dev, squad_dev)
    counts[_SOURCES.squad_train] = _n_questions(squad_train)
    counts[_SOURCES.squad_dev] = _n_questions(squad_dev)
    write_linked_questions(raw_root / _SOURCES.squad_dev_entities,
                           (LinkedQuestion(question, (subject,), qid)
                            for qid, question, subject in subjects["dev"]))
    counts[_SOURCES.squad_dev_entities] = len(subjects["dev"])

    rules = build_ppdb()
    write_ppdb_rules(raw_root / _SOURCES.ppdb, rules)
    counts[_SOURCES.ppdb] = len(rules)
    quora = build_quora(world, config.n_quora_pairs, stream(seed, "quora"))
    write_quora_pairs(raw_root / _SOURCES.quora, quora)
    counts[_SOURCES.quora] = len(quora)
    wikianswers = build_wikianswers(world, config.n_wikianswers_pairs,
                                    stream(seed, "wikianswers"), alignment_rules())
    write_wikianswers_pairs(raw_root / _SOURCES.wikianswers, wikianswers)
    counts[_SOURCES.wikianswers] = len(wikianswers)
    log.info("demo world (seed %d), reading sources: %d SQuAD-style questions, %d PPDB rules",
             seed, counts[_SOURCES.squad_train] + counts[_SOURCES.squad_dev], len(rules))
    return counts


def _n_questions(raw: dict) -> int:
    return sum(len(p["qas"]) for a in raw["data"] for p in a["paragraphs"])


__all__ = ["PassageRecord", "generate_demo_world", "generate_reading_world",
           "generate_retrieval_world", "write_articles"]
