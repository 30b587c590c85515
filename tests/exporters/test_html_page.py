"""The HTML report's page: server-side data, header flags, tables, and the rendered document (one file,
nothing fetched, a table view beside every chart)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from exporters.html.cdf import cdf_curve
from exporters.html.header import run_flags
from exporters.html.page import Chart, Page, Section, Table, Text, render_page
from exporters.html.run_data import RunData
from exporters.html.run_page import run_page
from exporters.html.server_charts import roofline_section
from exporters.html.server_data import client_minus_server_ttft, gauge_series
from exporters.html.tables import slo_table, thresholds_table
from exporters.html.write import REPORT_FILE, judge_thresholds
from loadgen.run.html_report import write_run_report
from metrics.gate.evaluate import RunView
from metrics.latency.samples import Samples
from metrics.records.frame import OK
from metrics.results import Roofline, RunDocument, SummaryView
from tests.exporters._html_runs import RUN, sample_run, with_server_timing, write_run
from tests.exporters._records import random_records


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunData, dict[str, Any]]:
    return sample_run(tmp_path_factory.mktemp("page") / "run")


def test_client_minus_server_ttft_is_summary_jsons(run: tuple[RunData, dict[str, Any]]) -> None:
    data, summary = run
    diff = client_minus_server_ttft(data.frame, data.values["ttft_s"], data.sampled)
    curve = cdf_curve(Samples.per_request(diff), data.sampled)
    assert curve is not None
    block = summary["server"]["ttft_client_minus_server_s"]
    assert curve.count == block["count"]
    assert curve.marks[50.0] == pytest.approx(block["p50"], rel=1e-12)
    assert curve.marks[99.0] == pytest.approx(block["p99"], rel=1e-12)


def test_gauges_on_the_runs_clock_with_hit_rate_per_interval() -> None:
    rows = [
        {"t_s": 0.0, "unix_s": 99.0, "running": 0, "waiting": 0, "kv_cache_usage": 0.0,
         "prefix_cache_queries_total": 100, "prefix_cache_hits_total": 10},
        {"t_s": 5.0, "unix_s": 104.0, "running": 3, "kv_cache_usage": 0.25,
         "prefix_cache_queries_total": 300, "prefix_cache_hits_total": 110},
        {"t_s": 10.0, "unix_s": 109.0, "running": 1, "kv_cache_usage": 0.5,
         "prefix_cache_queries_total": 300, "prefix_cache_hits_total": 110},  # no query in between
        {"t_s": 15.0, "unix_s": 114.0, "running": 2, "prefix_cache_queries_total": 50, "prefix_cache_hits_total": 5},
    ]
    series = gauge_series(rows, start_unix_s=100.0)
    assert series["running"] == ([-1.0, 4.0, 9.0, 14.0], [0.0, 3.0, 1.0, 2.0])
    assert series["waiting"] == ([-1.0], [0.0])  # only the scrape that had it: absent is not zero
    assert series["KV-cache usage"] == ([-1.0, 4.0, 9.0], [0.0, 25.0, 50.0])
    assert series["prefix-cache hit rate"] == ([4.0, 9.0, 14.0], [50.0, None, None])  # reset: no rate
    assert "prefix-cache hit rate (server's gauge)" not in series
    assert gauge_series(rows[:1], start_unix_s=None)["running"] == ([0.0], [0.0])  # no anchor: the scraper's clock


def summary_with(**run: Any) -> dict[str, Any]:
    return {"run": run, "requests": {"in_window": 10, "in_window_ok": 10, "in_window_failed": 0},
            "tokens": {"requests": 10}}


def test_flags_say_what_changes_how_a_run_is_read() -> None:
    def titles(summary: dict[str, Any]) -> list[str]:
        return [f.title for f in run_flags(summary)]

    assert titles(summary_with(complete=True)) == ["Nothing flagged."]
    assert titles(summary_with(complete=False, aborted=True, abort_reason="ttft")) == ["Aborted by a threshold."]
    assert titles(summary_with(complete=False, interrupted=True)) == ["Interrupted."]
    assert titles(summary_with(complete=False)) == ["Incomplete."]
    saturated = summary_with(complete=True, client_saturated=True, client_saturation={"lag_p99_s": 0.02, "threshold_s": 0.01})
    assert titles(saturated) == ["Client saturated."]
    failing = summary_with(complete=True)
    failing["requests"] = {"in_window": 10, "in_window_ok": 2, "in_window_failed": 8}
    failing["tokens"] = {"requests": 2, "output_estimated": 2, "prompt_accuracy": {"abs_rel_error": {"p50": 0.5}}}
    failing["input"] = {"skipped": 3}
    assert titles(failing) == ["Warning.", "Warning.", "Estimated token counts.", "Damaged records file."]
    stopped = summary_with(complete=False, stopped_early="stopped early: the first 10 requests all failed alike")
    stopped["requests"] = {"records": 10, "failed": 10, "succeeded": 0, "failure_messages_distinct": 1,
                           "failure_messages": [{"kind": "http_status", "http_status": 404, "count": 10,
                                                 "message": "HTTP 404: NotFoundError: The model `x` does not exist."}]}
    flags = run_flags(stopped)
    assert [f.title for f in flags] == ["Stopped early.", "What the server said."]  # not "Incomplete. (killed?)"
    assert "HTTP 404: NotFoundError: The model `x` does not exist." in flags[1].text


def test_slo_table_counts_each_part_alone(run: tuple[RunData, dict[str, Any]]) -> None:
    data, summary = run
    table = slo_table(data)
    measured = data.window.measured
    ok = data.frame.status == OK
    ttft_ok = int((measured & ok & (data.values["ttft_s"] <= 0.150)).sum())
    tpot = data.values["tpot_s"]
    tpot_ok = int((measured & ok & (data.frame.chunk_count > 0) & (np.isnan(tpot) | (tpot <= 0.020))).sum())
    total = int(measured.sum())
    assert table.rows[0][:2] == ["TTFT ≤ 150 ms", f"{ttft_ok} of {total}"]
    assert table.rows[1][:2] == ["TPOT ≤ 20 ms", f"{tpot_ok} of {total}"]
    good = summary["goodput"]["good"]
    assert table.rows[2][1].text == f"{good} of {total}"  # type: ignore[union-attr]
    assert 0 < good <= min(ttft_ok, tpot_ok) and ttft_ok < tpot_ok < total  # the SLO bites, the parts differ


def test_thresholds_judged_as_the_gate_judges_them(run: tuple[RunData, dict[str, Any]]) -> None:
    data, summary = run
    p99 = summary["latency"]["ttft_s"]["p99"]
    data.run = RunDocument.from_json({**summary["run"], "spec": {"gate": {"thresholds": [
        f"ttft:p(99) < {p99 * 2}", f"ttft:p(99) < {p99 / 2}", "ttft{cache:full}:p(75) < 10s",
        "ttft:p(99) < baseline * 1.1"]}}})
    verdicts, unjudged = judge_thresholds(data)
    assert [v.passed for v in verdicts] == [True, False, True]
    assert [t for t, _ in unjudged] == ["ttft:p(99) < baseline * 1.1"]
    with_baseline, none_left = judge_thresholds(data, RunView(summary))
    assert [v.passed for v in with_baseline] == [True, False, True, True] and none_left == []
    table = thresholds_table(verdicts, unjudged)
    assert [row[0].text for row in table.rows] == ["PASS", "FAIL", "PASS", "not judged"]  # type: ignore[union-attr]


def test_render_is_one_file_with_a_table_view_per_chart() -> None:
    chart = Chart({"data": [{"type": "scatter", "x": [1], "y": [2], "name": "</script><b>"}],
                   "layout": {"title": {"text": "t <1>"}}}, "d")
    page = Page("title & co", [("run", "<r>")], [], [Section("One", [chart, Text("x"), Table("c", ["h"], [["v"]])]),
                                                     Section("One", [chart])])
    html = render_page(page)
    assert html.count('<div class="chart"') == 2 and html.count('<details class="data-table"') == 2
    specs = re.findall(r'<script type="application/json" id="(fig-\d+)">(.*?)</script>', html, re.S)
    assert [s for s, _ in specs] == ["fig-0", "fig-1"]
    assert json.loads(specs[0][1].replace("<\\/", "</"))["data"][0]["name"] == "</script><b>"
    assert "<b>" not in html.replace("<\\/script><b>", "") and "&lt;r&gt;" in html
    assert 'href="#one"' in html and 'href="#one-2"' in html  # sections get distinct anchors
    # Nothing is fetched: no external script, style sheet, image or font.
    assert not re.search(r"<(script|img|link|iframe)[^>]+(src|href)=", html)
    assert "Plotly.newPlot" in html and html.count("<script>") == 2  # plotly.js and the bootstrap, inline


def test_run_report_holds_every_section(run: tuple[RunData, dict[str, Any]], tmp_path: Path) -> None:
    data, _ = run
    titles = [s.title for s in run_page(data).sections]
    assert titles == ["Summary", "SLO and thresholds", "Buckets", "Distributions", "Over time", "Server side"]
    charts = [i for s in run_page(data).sections for i in s.items if isinstance(i, Chart)]
    assert len(charts) == 5 + 7 + 2  # 5 CDFs, 7 over time, client − server TTFT and the phases


def test_write_run_report_defaults_to_the_run_directory(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "r", with_server_timing(random_records(40, error_every=4)),
                        run={**RUN, "settings": {"slo": ["ttft=100ms"]}})
    out = write_run_report(run_dir)
    assert out == run_dir / REPORT_FILE and out.stat().st_size > 1_000_000  # plotly.js inline
    other = write_run_report(run_dir, path=tmp_path / "elsewhere.html")
    assert other.read_bytes().count(b'<div class="chart"') == out.read_bytes().count(b'<div class="chart"') >= 14
    with pytest.raises(ValueError, match=r"no summary\.json"):
        write_run_report(tmp_path)


def test_roofline_floors_beside_the_measured_latency() -> None:
    roof = {"spec": {"model": "Llama-3.1-8B", "gpu": "H100-SXM", "tp": 1}, "mean_in_flight": 3.2,
            "ttft_s": {"measured_p50": 0.08, "floor": 0.02, "ratio": 4.0},
            "tpot_s": {"measured_p50": 0.012, "floor": 0.004, "ratio": 3.0},
            "e2e_s": {"measured_p50": None, "floor": None, "ratio": None}}
    section = roofline_section(Roofline.from_json(roof))
    assert section is not None
    chart, table = section.items
    assert isinstance(chart, Chart) and isinstance(table, Table)
    measured, floor = chart.figure["data"]
    assert measured["x"] == floor["x"] == ["TTFT p50", "TPOT p50"]  # E2E has no floor: not drawn
    assert measured["y"] == [80.0, 12.0] and floor["y"] == [20.0, 4.0]  # ms
    assert table.rows == [["TTFT p50", "80 ms", "20 ms", "4"], ["TPOT p50", "12 ms", "4 ms", "3"]]
    failed = roofline_section(Roofline.from_json({"spec": roof["spec"], "error": "unknown GPU"}))
    assert failed is not None and isinstance(failed.items[0], Text) and "unknown GPU" in failed.items[0].text
    assert roofline_section(SummaryView.from_json({}).roofline) is None
