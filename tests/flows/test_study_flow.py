"""The whole study on the smoke profile: run, cached rerun, and SIGKILL-then-resume.

One flow run end to end, then a second run of the same configuration that must be served from
Prefect's cache (every cached task in state ``Cached``), checked through the Prefect API
(``two_runs``, tests/flows/conftest.py). Its outputs are also the reference of the last test:
`qastress run --until retrieval` (the real command, in a process group of its own, reporting to
the suite's test API) killed twice and resumed must write the same outputs, byte for byte (the
whole study the same way with ``-m slow``). The kill test lives in
this file so that it shares the one uninterrupted study (pytest-xdist's ``--dist loadfile``
gives a file's tests to one worker) instead of running a second one of its own.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from prefect_runs import settled_task_states, task_states

from tasks.io.dpr_results import read_retrieval_results
from tasks.io.entityquestions import discover_eq_files
from tasks.io.trec import read_trec_run
from tasks.layout import Layout

PROJECT_ROOT = Path(__file__).resolve().parents[2]
PATH_NAMES = ("data", "results", "metrics", "plots", "reports", "state")

# the shard-parallel tasks (one per shard of work, on the task runner) -> runs per study run
SHARDED = {"encode passage shard": None, "search BM25 batch": None,
           "generate paraphrase shard": None}


def test_shard_parallel_stages_run_one_task_per_shard(two_runs, smoke_params):
    from tasks.retrieval.query_sets import read_query_set

    first, _ = two_runs
    states = settled_task_states(first.state_details.flow_run_id, SHARDED)
    layout = Layout(smoke_params)
    questions = json.loads(layout.retrieval_metrics("bm25").read_text())["questions"]
    batch = smoke_params.retrieval.bm25.batch_size
    batches = -(-questions // batch)
    # every query set is searched in batches: the test split and the Figure-1 buckets
    buckets = len(read_query_set(layout.retrieval_queries("buckets")))
    bucket_batches = -(-buckets // batch)
    # ... and the retriever experiments' no-overlap test questions (BM25 beside Table 2)
    pattern = len(read_query_set(layout.experiment_results / "queries" / "pattern.json"))
    pattern_batches = -(-pattern // batch)
    assert batches == 3 and bucket_batches >= 1 and pattern_batches == 1
    assert states["search BM25 batch"] == ["Completed"] * (batches + bucket_batches
                                                           + pattern_batches)
    assert len(states["generate paraphrase shard"]) >= 2, states
    assert set(states["generate paraphrase shard"]) == {"Completed"}


def test_slice_writes_real_format_outputs(two_runs, smoke_params):
    first, _ = two_runs
    assert first.is_completed()
    layout = Layout(smoke_params)
    files = discover_eq_files(layout.eq_dataset, "test")
    assert len(files) == 24
    metrics = json.loads(layout.retrieval_metrics("bm25").read_text())
    assert set(metrics["per_relation"]) == set(files)
    k = smoke_params.retrieval.headline_k
    for accuracy in metrics["per_relation"].values():
        values = [accuracy[f"top{k}"] for k in smoke_params.retrieval.ks]
        assert values == sorted(values)  # accuracy cannot fall as k grows
        assert 0.0 <= values[-1] <= 100.0
    assert 0 < metrics["macro"][f"top{k}"] <= 100
    run = read_trec_run(layout.retrieval_results("bm25") / "test.trec")
    assert len(run) == metrics["questions"]
    results = read_retrieval_results(layout.retrieval_results("bm25") / "P19.bm25.json")
    assert all(len(r.ctxs) <= smoke_params.retrieval.bm25.top_k for r in results)
    report = layout.retrieval_report("bm25").read_text()
    assert "macro average" in report and "P19" in report


def test_study_writes_the_html_report(two_runs, smoke_params):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    layout = Layout(smoke_params)
    html = layout.report_html.read_text(encoding="utf-8")
    k = smoke_params.retrieval.headline_k
    for name in smoke_params.retrieval.retrievers:
        macro = json.loads(layout.retrieval_metrics(name).read_text())["macro"][f"top{k}"]
        assert f"{name}: macro top-{k} accuracy {macro:.2f}%" in html, name
    # accuracy vs k, Figure 1 and Figure 2 (t-SNE of the retriever experiments)
    assert html.count("data:image/png;base64,") == 3 and 'class="not-run-note"' not in html
    # the smoke profile fine-tunes once more with retriever_experiments.extra_seeds
    assert "Over fine-tuning seeds" in html and "onlyP - onlyQ" in html
    with get_client(sync_client=True) as client:
        links = client.read_artifacts(artifact_filter=ArtifactFilter(
            key=ArtifactFilterKey(any_=["qastress-report"])))
    assert any(layout.report_html.resolve().as_uri() in str(a.data) for a in links), links
    with get_client(sync_client=True) as client:
        figures = client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(
            any_=["figure-retrieval-accuracy-vs-k", "figure-retrieval-buckets"])))
    assert {a.key for a in figures} == {"figure-retrieval-accuracy-vs-k",
                                        "figure-retrieval-buckets"}
    assert any(layout.retrieval_accuracy_plot.resolve().as_uri() in str(a.data)
               for a in figures), figures


def test_study_records_the_time_of_every_stage(two_runs, smoke_params):
    from tasks.pipeline.stages import STAGES

    timings = json.loads(Layout(smoke_params).study_timings.read_text())
    ran = [stage.name for stage in STAGES if stage.when(smoke_params)]
    assert [s["stage"] for s in timings["stages"]] == ran
    assert all(s["wall_s"] >= 0 and s["cpu_s"] >= 0 for s in timings["stages"])
    workers = {s["worker"] for s in timings["stages"]}  # the process that ran each stage
    assert all(w.startswith("pid ") for w in workers)
    assert len(workers) <= smoke_params.orchestration.concurrent_stages
    timeline = Layout(smoke_params).study_timeline
    assert timeline.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert timings["total"]["cpu_s"] > 0
    machine = timings["machine"]  # the machine's speed at the start and at the end
    assert machine["matmul_gflops"] > 0 and machine["matmul_gflops_end"] > 0
    assert machine["python_mops"] > 0 and machine["python_mops_end"] > 0
    assert machine["cores"] >= 1 and machine["torch_threads"] >= 1 and machine["cpu"]


def test_second_run_is_served_from_cache(two_runs, smoke_params):
    from tasks.pipeline.stages import STAGES

    assert smoke_params.orchestration.concurrent_stages == 2  # the stages ran side by side
    first, second = two_runs
    assert second.is_completed()
    states = settled_task_states(second.state_details.flow_run_id, SHARDED)
    reports = {"report top-k", "paraphrase report"}  # republish their artifacts every run
    # with concurrent_stages each stage is a task of the study that runs its flow: never cached
    # itself (its flow's tasks are)
    stage_tasks = {stage.name for stage in STAGES}
    cached = {name: s for name, s in states.items() if name not in reports | stage_tasks}
    assert cached, states
    not_cached = {name: s for name, s in cached.items() if any(x != "Cached" for x in s)}
    assert not not_cached, not_cached
    first_states = task_states(first.state_details.flow_run_id)
    # planned once per dense encoder (dense, dpr-nq) over the same passages and shard size:
    # the second plan of the first run is the first plan's cached result; the retriever
    # experiments ask for DPR-NQ's index again and get the retrieval flow's (cached) one
    repeated = {"plan passage shards", "encode passage shard", "build dense index"}
    assert all("Cached" not in s for name, s in first_states.items() if name not in repeated), \
        first_states
    assert "Completed" in first_states["plan passage shards"], first_states
    assert "Completed" in first_states["encode passage shard"], first_states


def test_smoke_scores_equal_the_expected_ones(two_runs, smoke_params):
    """Every number of the smoke run's metrics/*.json against tasks/scores/expected/smoke.yaml
    (with its machine variant for this CPU, if one is packaged), as `qastress check-scores`
    reads them: a change needs `qastress check-scores --profile smoke --update` (a deliberate
    update)."""
    from tasks.pipeline.machine_speed import cpu_model
    from tasks.scores.compare import compare, passed, render_findings
    from tasks.scores.expected import expected_path
    from tasks.scores.machine_variants import expected_on
    from tasks.scores.metrics import read_metrics

    findings = compare(expected_on(expected_path("smoke"), cpu_model()),
                       read_metrics(smoke_params.paths.metrics))
    assert passed(findings), render_findings(findings)
    assert sum(f.status == "equal" for f in findings) > 100


def test_retrieve_then_read_reads_every_retriever(two_runs, smoke_params):
    from tasks.io.squad_predictions import read_predictions
    from tasks.reading.retrieve_then_read import predictions_file

    layout, cfg = Layout(smoke_params), smoke_params.retrieve_then_read
    metrics = json.loads(layout.retrieve_then_read_metrics.read_text())
    names = list(smoke_params.retrieval.retrievers)
    assert list(metrics["retrievers"]) == names
    assert metrics["questions"] == 24 * cfg.questions_per_relation
    assert set(metrics["comparisons"]) == {f"bm25 - {n}" for n in names if n != "bm25"}
    for name, block in metrics["retrievers"].items():
        recalls = [block[f"top{k}"]["answer_recall"] for k in cfg.ks]
        assert recalls == sorted(recalls), name  # more passages cannot lose an answer
        for k in cfg.ks:
            assert block[f"top{k}"]["questions"] == metrics["questions"]
            preds = read_predictions(predictions_file(layout.retrieve_then_read_results, name, k))
            assert len(preds) == metrics["questions"]


def test_every_registry_output_exists_after_the_study(two_runs, smoke_params):
    """The registry (hence dvc.yaml) names the paths the flows really write: every output of
    every stage that the configuration runs (the smoke profile leaves out the adversarial
    augmentation kind; `dvc repro`, which runs it anyway, is tested in test_dvc_repro.py)."""
    from tasks.pipeline.stages import STAGES

    paths = {f"${{paths.{name}}}": str(getattr(smoke_params.paths, name))
             for name in ("data", "results", "metrics", "plots", "reports")}
    run = [stage for stage in STAGES if stage.when(smoke_params)]
    assert {"train_reader", "augment_non_adversarial", "reader_augmentation"} <= {
        stage.name for stage in run}
    assert "augment_adversarial" not in {stage.name for stage in run}
    for stage in run:
        for declared in (*stage.outs, *stage.metrics, *stage.plots):
            head, _, rest = declared.partition("/")
            assert (Path(paths[head]) / rest).exists(), (stage.name, declared)


def _env(root: Path) -> dict[str, str]:
    """The environment of `qastress run`: Prefect's home in the test's folder, and the suite's
    test API as the API the run reports to (as a user's runs report to `qastress server up`):
    a temporary API of its own would take 10-50 s to start on 2 cores, three times over. Its
    start, retries and shutdown are tested in test_temporary_api.py."""
    from prefect.settings import PREFECT_API_URL

    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env["PREFECT_HOME"] = str(root / "prefect-home")
    env["PREFECT_API_URL"] = PREFECT_API_URL.value()  # the session's (conftest.prefect_api)
    return env


def _study(params_file: Path, root: Path, until: list[str], kill_when: Path | None = None,
           timeout: float = 900) -> int:
    """Run `qastress run [--until STAGE]`; SIGKILL its process group once ``kill_when``
    exists."""
    log = (root / "log.txt").open("a")
    args = [str(Path(sys.executable).parent / "qastress"), "run", "--params", str(params_file)]
    for stage in until:
        args += ["--until", stage]
    proc = subprocess.Popen(args, cwd=PROJECT_ROOT, env=_env(root), stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + timeout
    try:
        while proc.poll() is None:
            if kill_when is not None and kill_when.exists():
                os.killpg(proc.pid, signal.SIGKILL)
                return proc.wait(timeout=60)
            assert time.monotonic() < deadline, "the study did not finish in time"
            time.sleep(0.2)
        return proc.returncode
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


def _stamps(paths: list[Path]) -> dict[str, int]:
    return {str(p): p.stat().st_mtime_ns for p in paths}


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


@pytest.mark.parametrize("until", [
    pytest.param(["retrieval"], id="until-retrieval"),
    pytest.param([], id="whole-study", marks=pytest.mark.slow)])
def test_sigkill_at_two_points_then_rerun_gives_the_same_outputs(two_runs, smoke_params,
                                                                  tmp_path, until):
    """Kill `qastress run` (its process group, SIGKILL) once the BM25 index is complete,
    kill the rerun once the BM25 retrieval metrics exist, run again: only unfinished work is
    redone, and every output the runs wrote equals that of the uninterrupted study byte for
    byte. The runs use the uninterrupted study's own paths (its
    metrics name them, the report holds their sha256), its outputs moved aside meanwhile and
    put back afterwards. The stages run side by side, as in the uninterrupted study, so a kill
    also hits whatever stage ran beside the one awaited.

    By default the runs go `--until retrieval`: the stages both kills fall in and those beside
    them (demo world, BM25 index, EntityQuestions, DPR training, retrieval), in a third of the
    whole study's time. ``-m slow`` runs the whole study the same way and compares its report
    too."""
    from tasks.params_loading import load_params

    raw = yaml.safe_load((PROJECT_ROOT / "params.yaml").read_text(encoding="utf-8"))
    raw["profile"] = "smoke"
    raw["paths"] = {name: str(getattr(smoke_params.paths, name)) for name in PATH_NAMES}
    params_file = tmp_path / "params.yaml"
    params_file.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    assert load_params(params_file) == smoke_params  # what `qastress run` reads: the same
    layout, aside = Layout(smoke_params), tmp_path / "uninterrupted"
    aside.mkdir()
    for name in PATH_NAMES:  # the Prefect result store and task cache (paths.state) too
        getattr(smoke_params.paths, name).rename(aside / name)
    try:
        first_kill = layout.bm25_index / "manifest.json"
        assert _study(params_file, tmp_path, until, kill_when=first_kill) == -signal.SIGKILL
        assert not layout.retrieval_metrics("bm25").exists()
        done_before = [layout.raw / "manifest.retrieval.json", first_kill]
        stamps = _stamps(done_before)

        second_kill = layout.retrieval_metrics("bm25")
        assert _study(params_file, tmp_path, until, kill_when=second_kill) == -signal.SIGKILL
        assert not layout.report_html.exists()
        world = str(done_before[0])  # the finished demo world was not written again (the index
        # may be: a kill between its manifest and the task's completion leaves it unfinished)
        assert _stamps(done_before[:1]) == {world: stamps[world]}
        # ... and the runs the killed retrieval stage had finished (its tasks' cache records
        # are written as each completes, not when the stage ends)
        done_before = [layout.raw / "manifest.retrieval.json", layout.questions_table,
                       layout.bm25_index / "manifest.json",
                       layout.retrieval_results("bm25") / "test.trec",
                       layout.retrieval_results("dense") / "test.trec"]
        stamps = _stamps(done_before)

        assert _study(params_file, tmp_path, until) == 0, \
            (tmp_path / "log.txt").read_text()[-3000:]
        assert _stamps(done_before) == stamps  # world, questions, BM25 index, runs: kept
        # every metrics file, report and plot the runs wrote, and the retrieval results
        wrote = {name: _files(getattr(smoke_params.paths, name))
                 for name in ("metrics", "reports", "plots")}
        assert {f"retrieval_{r}.json" for r in smoke_params.retrieval.retrievers} <= set(
            wrote["metrics"])
        for name, files in wrote.items():
            reference = _files(aside / name)
            assert files == {f: reference.get(f) for f in files}, name
        retrieval = layout.retrieval_results("bm25").parent
        assert _files(retrieval) == _files(aside / "results" / retrieval.name)
        if not until:
            assert set(wrote["metrics"]) == set(_files(aside / "metrics"))
            assert layout.report_html.read_bytes() == (
                aside / "reports" / layout.report_html.name).read_bytes()
        else:
            assert not layout.report_html.exists()  # only the stages up to the target ran
    finally:  # the other tests of this file read the uninterrupted study's outputs
        for name in PATH_NAMES:
            shutil.rmtree(getattr(smoke_params.paths, name), ignore_errors=True)
            (aside / name).rename(getattr(smoke_params.paths, name))
