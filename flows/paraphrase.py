"""Flow: paraphrased SQuAD test sets (Gan & Ng, 2019, "Improving the Robustness of Question
Answering Systems to Question Paraphrasing").

PPDB rules -> on-disk lookup table; WikiAnswers + Quora pairs -> training triples (source,
suggestion, target) -> SentencePiece vocabulary -> suggestion-guided paraphraser (transformer
with a copy mechanism); SQuAD dev questions -> PPDB suggestions -> paraphrases (one per
suggestion, and one without; shards of questions on the task runner) -> similarity filter
(sentence embeddings; 0.95 test / 0.9 / 0.83 augmentation) -> at most one paraphrase per
question -> human-evaluation form (ratings imported when given; on the demo world the world's
truth rates, and only the accepted pairs are kept) -> SQuAD v1.1 orig/para files in the layout
of the released sets -> report.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from flows._params import raw_input, resolve
from flows._taggers import flair_taggers
from flows.generate_paraphrases import generate_paraphrases_on
from tasks.config import Params
from tasks.demo.raters import world_rating_task
from tasks.layout import Layout
from tasks.paraphrase.flow_tasks import (
    adversarial_task,
    build_ppdb_table_task,
    edits_task,
    human_eval_task,
    report_task,
    similarity_task,
    suggestions_task,
    test_set_task,
    train_paraphraser_task,
    train_vocab_task,
    training_triples_task,
)
from tasks.paraphrase.ppdb_lookup import resolve_pack


@flow(name="paraphrase", log_prints=True)
def paraphrase(params: Params | None = None, profile: str | None = None,
               params_file: str | None = None) -> dict:
    """Build the paraphrased test set of the SQuAD dev questions; return the step counts."""
    params = resolve(params, profile, params_file)
    layout, cfg = Layout(params), params.paraphrase
    sim, name = cfg.similarity, cfg.test_set_name
    squad_dev = raw_input(params, "squad_dev")  # checked before the paraphraser's training
    stats: dict[str, dict] = {}
    stats["ppdb"] = build_ppdb_table_task(
        resolve_pack(raw_input(params, "ppdb"), cfg.ppdb_pack), layout.ppdb_table,
        min_score=cfg.ppdb_min_score, on_error=cfg.on_bad_record,
        batch_size=cfg.ppdb_batch_size)
    model_dir = None
    if cfg.generator == "neural":
        stats["triples"] = training_triples_task(
            raw_input(params, "wikianswers"), raw_input(params, "quora"), layout.paraphrase_triples,
            min_tokens=cfg.min_question_tokens, none_share=cfg.none_share, seed=cfg.seed,
            on_error=cfg.on_bad_record, max_wikianswers_pairs=cfg.max_wikianswers_pairs,
            max_quora_pairs=cfg.max_quora_pairs)
        stats["vocab"] = train_vocab_task(layout.paraphrase_triples, layout.paraphrase_vocab,
                                          cfg.vocab_size, cfg.vocab_model_type)
        stats["paraphraser"] = train_paraphraser_task(
            layout.paraphrase_triples, layout.paraphrase_vocab, layout.paraphraser_dir,
            cfg.model, checkpoint_dir=str(layout.paraphraser_checkpoints))
        model_dir = layout.paraphraser_dir
    stats["suggestions"] = suggestions_task(
        squad_dev, layout.ppdb_table, layout.paraphrase_suggestions, max_n=cfg.max_ngram,
        per_question=cfg.suggestions_per_question, max_per_phrase=cfg.ppdb_max_per_phrase,
        max_questions=cfg.max_questions, on_error=cfg.on_bad_record)
    stats["generation"] = generate_paraphrases_on(
        params.orchestration, layout.paraphrase_suggestions, layout.paraphrase_candidates,
        model_dir, layout.ppdb_table, cfg, cfg.without_suggestion)
    thresholds = {"test_set": sim.test_set, "augmentation": sim.augmentation,
                  "adversarial_augmentation": sim.adversarial_augmentation}
    stats["similarity"] = similarity_task(
        layout.paraphrase_candidates, layout.paraphrase_scored, thresholds,
        model_path=sim.model, batch_size=sim.batch_size)
    stats["test_set"] = test_set_task(
        squad_dev, layout.paraphrase_scored, _chosen_dir(params, cfg.ratings_file),
        seed=cfg.seed, name=name, id_base=cfg.test_set_id_base, on_error=cfg.on_bad_record)
    stats["human_eval"] = _human_eval(params, name, cfg.ratings_file, "dev")
    if cfg.adversarial:
        stats.update(_adversarial(params, model_dir, thresholds))
    stats["edits"] = _edits(layout.paraphrase_test_sets,
                            (name, "adv") if cfg.adversarial else (name,))
    notes = [f"Profile `{params.profile}`; paraphraser `{cfg.generator}`; similarity "
             f"thresholds {sim.test_set} (test set), {sim.augmentation} (augmentation), "
             f"{sim.adversarial_augmentation} (adversarial augmentation), kept when above."]
    rated_sets = _rated_sets(params, name)
    acceptance = {set_name: stats[key].get("acceptance_rate")
                  for set_name, key in ((name, "human_eval"), ("adv", "adversarial_human_eval"))
                  if stats.get(key, {}).get("acceptance_rate") is not None}
    if acceptance:
        stats["acceptance"] = acceptance
        notes.append("Only the pairs every rater accepts (>= "
                     f"{cfg.min_rating} on both scales) enter the paraphrased sets"
                     + (" (demo world: raters A strict and B lenient, played by the world's "
                        "truth, tasks/demo/raters.py)." if _world_rated(params, None) else "."))
    report_task(stats, layout.paraphrase_scored, cfg.report_examples, layout.paraphrase_report,
                layout.paraphrase_metrics, notes,
                layout.adversarial_scored if cfg.adversarial else None, rated=rated_sets,
                raters=list(cfg.raters), min_rating=cfg.min_rating)
    test, rated = stats["test_set"], stats["human_eval"]
    accepted = (f", {rated['kept']} accepted by the raters (acceptance rate "
                f"{rated['acceptance_rate']:.3f})" if rated.get("acceptance_rate") is not None
                else "")
    print(f"paraphrased test set: {test['test_pairs']} of {test['questions']} questions"
          f"{accepted} -> {layout.paraphrase_test_sets}; report {layout.paraphrase_report}")
    if not test["test_pairs"]:
        print(f"warning: no paraphrase passed the {sim.test_set} similarity threshold; the "
              "test set is empty (expected with the smoke profile's barely trained model)")
    return stats


def _edits(sets_dir: Path, names: tuple[str, ...]) -> dict[str, dict]:
    """What the paraphrases of each set written to ``sets_dir`` change (the words a reader
    could miss, :mod:`tasks.paraphrase.edits`)."""
    return {name: edits_task(sets_dir / f"{name}_pairs.parquet", sets_dir / f"{name}_orig.json")
            for name in names if (sets_dir / f"{name}_pairs.parquet").is_file()}


def _world_rated(params: Params, ratings_file: str | None) -> bool:
    """Whether the world's truth rates the pairs: demo world, no ratings file, switched on."""
    return (params.sources.world == "demo" and params.paraphrase.world_raters
            and ratings_file is None)


def _chosen_dir(params: Params, ratings_file: str | None) -> Path:
    """Where the chosen pairs go: straight into the paraphrased sets, or (world raters) to the
    unrated sets, from which only the accepted pairs reach the paraphrased sets."""
    layout = Layout(params)
    return (layout.paraphrase_unrated_sets if _world_rated(params, ratings_file)
            else layout.paraphrase_test_sets)


def _human_eval(params: Params, name: str, ratings_file: str | None, scheme: str) -> dict:
    """Rating form of the ``name`` test set; ratings imported when the file is configured.

    On the demo world without a ratings file the world raters fill the form
    (:mod:`tasks.demo.raters`) and the accepted pairs become the ``name`` set of the
    paraphrased sets; for real data the filled CSV stays the only source of ratings.
    """
    layout, cfg = Layout(params), params.paraphrase
    ratings = Path(ratings_file) if ratings_file else None
    if ratings is not None and not ratings.is_absolute():
        ratings = params.paths.results / ratings
    chosen = _chosen_dir(params, ratings_file)
    out_dir = layout.paraphrase_human_eval / name
    common = {"pairs_path": chosen / f"{name}_pairs.parquet",
              "orig_path": chosen / f"{name}_orig.json", "out_dir": out_dir,
              "raters": list(cfg.raters), "seed": cfg.seed, "min_rating": cfg.min_rating,
              "on_error": cfg.on_bad_record, "name": name,
              "id_base": cfg.test_set_id_base if scheme == "dev" else None,
              "id_scheme": scheme}
    if not _world_rated(params, ratings_file):
        return human_eval_task(ratings_file=ratings, **common)
    human_eval_task(ratings_file=None, **common)
    world = world_rating_task(out_dir / "form.csv", out_dir / "world_ratings.csv",
                              list(cfg.raters), cfg.min_rating)
    result = human_eval_task(ratings_file=out_dir / "world_ratings.csv",
                             accepted_dir=layout.paraphrase_test_sets, **common)
    return {**result, "rated_by": "demo world truth (tasks/demo/raters.py)",
            **{k: v for k, v in world.items() if k.endswith("_raters")}}


def _rated_sets(params: Params, name: str) -> dict[str, tuple[Path, Path]]:
    """Set name -> (its chosen pairs, the filled rating form), for the sets that were rated."""
    layout, cfg = Layout(params), params.paraphrase
    out = {}
    sets = [(name, cfg.ratings_file)]
    if cfg.adversarial:
        sets.append(("adv", cfg.adversarial_ratings_file))
    for set_name, ratings_file in sets:
        chosen = _chosen_dir(params, ratings_file) / f"{set_name}_pairs.parquet"
        if _world_rated(params, ratings_file):
            out[set_name] = (chosen, layout.paraphrase_human_eval / set_name
                             / "world_ratings.csv")
        elif ratings_file:
            path = Path(ratings_file)
            out[set_name] = (chosen, path if path.is_absolute()
                             else params.paths.results / path)
    return out


def _adversarial(params: Params, model_dir: Path | None, thresholds: dict) -> dict:
    """Adversarial suggestions (Flair NER + chunker over the context) -> paraphrases ->
    similarity -> the ``adv`` set (kept above the adversarial threshold) and its rating form."""
    layout, cfg = Layout(params), params.paraphrase
    stats: dict[str, dict] = {}
    ner, chunk, trained = flair_taggers(params)
    if trained is not None:
        stats["taggers"] = trained
    squad_dev = params.raw_path("squad_dev")
    stats["adversarial"] = adversarial_task(
        squad_dev, ner, chunk, layout.adversarial_suggestions,
        per_question=cfg.suggestions_per_question, max_questions=cfg.max_questions,
        on_error=cfg.on_bad_record)
    stats["adversarial_generation"] = generate_paraphrases_on(
        params.orchestration, layout.adversarial_suggestions, layout.adversarial_candidates,
        model_dir, layout.ppdb_table, cfg, without_suggestion=False)
    stats["adversarial_similarity"] = similarity_task(
        layout.adversarial_candidates, layout.adversarial_scored, thresholds,
        model_path=cfg.similarity.model, batch_size=cfg.similarity.batch_size)
    stats["adversarial_set"] = test_set_task(
        squad_dev, layout.adversarial_scored, _chosen_dir(params, cfg.adversarial_ratings_file),
        seed=cfg.seed,
        keep_column="keep_adversarial_augmentation", name="adv",
        on_error=cfg.on_bad_record, id_scheme="adv")
    stats["adversarial_human_eval"] = _human_eval(params, "adv", cfg.adversarial_ratings_file,
                                                  "adv")
    return stats


if __name__ == "__main__":
    from flows.cli import main_for

    main_for("paraphrase")
