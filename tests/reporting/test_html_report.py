"""The HTML report: numbers from the artifacts, figures embedded, params and fingerprints,
byte-identical on rebuild, missing flows listed as not run, text escaped."""

from __future__ import annotations

import base64
import hashlib
import json
import logging
from pathlib import Path

from report_world import _build, _world, _write

from tasks.reporting.html_report import (
    figure_files,
    publish_report_artifacts,
    raw_input_files,
    report_artifacts,
    write_report,
)


def test_report_holds_every_flows_numbers_figures_params_and_fingerprints(tmp_path):
    layout = _world(tmp_path)
    report = _build(layout)
    html = report.html
    assert report.not_run == [] and "Not run" not in html
    for number in ("71.25", "63.50", "67.38", "49.72", "75.00",  # top-k tables and macro
                   "+17.50", "[+3.21, +31.87]",  # comparison with its CI
                   "42.42", "24.24", "0–3",  # buckets (Figure 1 data)
                   "85.71", "71.43", "+14.29", "[-1.50, +28.57]",  # paraphrased retrieval
                   "A's birthplace?",  # paraphrase report (Markdown)
                   "0.43", "2.90", "30 logged points",  # DPR-NQ training
                   "63.75", "91.25", "51.25", "+12.50 [+2.50, +25.00] * (n=40)",  # Table 2
                   "0 training questions: not run", "P19 24 + nq 60", "27.27",  # Table 3
                   "-7.50 [-15.00, -1.25]", "+0.312",  # Table 3 CI, Figure 2 silhouette
                   "44.25", "+12.75", "no training questions: not run", "4,141 bytes",  # Table 4
                   "57.14", "47.62", "+14.28", "[+1.25, +30.50] *", "71.25",  # Tables 1-2
                   "18 of 20 questions", "3-77", "61.11", "64.72",  # dev per bucket
                   "6 of 7 pairs", "4-70", "66.67", "+33.33 [+0.00, +66.67]",  # dev set per bucket
                   "drops a word of the answer&#39;s sentence", "+50.00 [+0.00, +100.00]",
                   "+0.00 [-40.00, +40.00]",  # dev set per edit group
                   "0.9", "19", "52.12", "+4.50", "[+0.75, +8.25] *",  # Tables 3-6
                   "12.50", "37.50", "62.50", "+6.25", "[-3.50, +18.75]", "11.11"):  # RTR
        assert number in html, number
    assert "61.50" not in html  # training times stay in the metrics (reproducible page)
    for png in (layout.retrieval_accuracy_plot, layout.retrieval_buckets_plot,
                layout.experiment_tsne_plot):
        assert f"data:image/png;base64,{base64.b64encode(png.read_bytes()).decode()}" in html
    assert "k1: 0.9" in html and "profile: smoke" in html  # the resolved params as YAML
    assert "data: data" in html  # paths relative to the run's root, not absolute
    raw = layout.raw / "wikipedia" / "psgs_w100.tsv"
    for path in (raw, layout.raw / "trex" / "a.json", layout.retrieval_metrics("bm25"),
                 layout.eq_summary, layout.retrieval_buckets_plot):
        assert hashlib.sha256(path.read_bytes()).hexdigest() in html, path
    assert str(tmp_path) not in html
    assert "bm25: macro top-20 accuracy 67.38%" in report.headline
    assert "paraphrased test set: 7 of 20" in report.headline
    assert "reader minilm on dev: F1 orig - para +14.28 points" in report.headline
    assert "non_adversarial augmentation on dev_para: F1 after - before +4.50" in \
        report.headline
    assert "retrieve-then-read EM@5 (macro): bm25 31.25, dense 31.25" in report.headline
    for anchor in ("overview", "entityquestions", "topk", "comparison", "buckets", "paraphrase",
                   "paraphrased-retrieval", "retriever-training", "retriever-experiments",
                   "specialised", "readers", "retrieve-then-read", "reader-augmentation",
                   "params", "fingerprints"):
        assert f'href="#{anchor}"' in html and f'id="{anchor}"' in html


def test_rebuild_is_byte_identical_here_and_in_another_directory(tmp_path):
    layout = _world(tmp_path / "one")
    out = layout.report_html
    first = write_report(layout.params, report_artifacts(layout), raw_input_files(layout),
                         figure_files(layout), Path(__file__), out)
    assert first["path"] == str(out)
    before = out.read_bytes()
    write_report(layout.params, report_artifacts(layout), raw_input_files(layout),
                 figure_files(layout), Path(__file__), out)
    assert out.read_bytes() == before
    assert [p.name for p in out.parent.iterdir() if p.name.startswith(".")] == []  # atomic
    elsewhere = _world(tmp_path / "two")
    assert _build(elsewhere).html.encode() == before


def test_missing_flows_are_listed_as_not_run(tmp_path):
    layout = _world(tmp_path, flows=("entity-questions",))
    report = _build(layout)
    assert report.not_run == ["train-retriever", "retrieval", "retriever-experiments",
                              "specialised-encoders", "paraphrase", "paraphrased-retrieval",
                              "readers", "retrieve-then-read", "reader-augmentation"]
    html = report.html
    # top-k, comparison, buckets, retriever training and experiments, specialised encoders,
    # paraphrase x2, readers x3
    assert html.count('class="not-run-note"') == 11
    assert "metrics/retrieval_bm25.json" in html  # what is missing, relative to the run root
    assert "metrics/specialised_encoders.json" in html
    assert "metrics/reader_augmentation.json" in html
    assert ("not run: train-retriever, retrieval, retriever-experiments, specialised-encoders, "
            "paraphrase, paraphrased-retrieval, readers, retrieve-then-read, "
            "reader-augmentation") in report.headline
    assert "Relations selected" in html  # what did run is there


def test_partial_retrieval_keeps_what_exists(tmp_path):
    layout = _world(tmp_path, flows=("retrieval",))
    layout.retrieval_metrics("dense").unlink()
    html = _build(layout).html
    assert "67.38" in html and "49.72" not in html
    assert "Not written: metrics/retrieval_dense.json" in html


def test_text_from_artifacts_is_escaped(tmp_path):
    layout = _world(tmp_path)
    metrics = json.loads(layout.retrieval_metrics("bm25").read_text())
    metrics["per_relation"]["<b>P&19</b>"] = metrics["per_relation"].pop("P19")
    _write(layout.retrieval_metrics("bm25"), metrics)
    html = _build(layout).html
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<b>P&19</b>" not in html and "&lt;b&gt;P&amp;19&lt;/b&gt;" in html


def test_publishing_outside_a_prefect_run_is_a_no_op(tmp_path, caplog):
    with caplog.at_level(logging.DEBUG, logger="tasks.reporting.tables"):
        publish_report_artifacts(tmp_path / "report.html", "# headline\n")
    assert [r.getMessage() for r in caplog.records] == [
        f"not in a Prefect run: artifact {key} not published"
        for key in ("qastress-report", "qastress-report-summary")]
