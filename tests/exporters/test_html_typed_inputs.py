"""Inputs of the report read once, typed: server_metrics.jsonl lines (numbers checked where read), the
header's SLO and workload lines from typed views."""

from __future__ import annotations

from pathlib import Path

from exporters.html.run_data import read_server_series
from exporters.html.server_data import gauge_series
from metrics.results import SERVER_SERIES_FILE


def test_a_scrape_line_keeps_only_the_numbers_the_charts_read(tmp_path: Path) -> None:
    (tmp_path / SERVER_SERIES_FILE).write_text(
        '{"t_s": 1, "unix_s": 101.5, "running": "3", "waiting": true, "kv_cache_usage": 0.5, "other": 7}\n'
        "not json\n[1, 2]\n"
        '{"t_s": 2.0, "running": 4, "prefix_cache_queries_total": null}\n', encoding="utf-8")
    rows = read_server_series(tmp_path)
    assert rows == [{"t_s": 1.0, "unix_s": 101.5, "kv_cache_usage": 0.5}, {"t_s": 2.0, "running": 4.0}]
    assert all(type(v) is float for row in rows for v in row.values())
    series = gauge_series(rows, start_unix_s=100.0)  # the second line has no wall clock: its own
    assert series["running"] == ([2.0], [4.0]) and series["KV-cache usage"] == ([1.5], [50.0])
    assert "waiting" not in series


def test_no_scrape_file_is_no_row(tmp_path: Path) -> None:
    assert read_server_series(tmp_path) == []


def test_the_header_lines_read_typed_views_not_documents() -> None:
    """The SLO line takes the SLO's bounds (as every page holds them) and the workload line run.json's typed
    view, each worded as the raw document was."""
    from exporters.html.header import slo_text, workload_text
    from metrics.results import Run

    assert slo_text({"ttft_s": 0.2, "tpot_s": None, "fluidity_min": 0.9, "fluidity_deadlines": [0.1]}) == \
        "TTFT ≤ 200 ms, fluidity ≥ 0.9"
    assert slo_text(None).startswith("none given")
    run = Run.from_json({"workload": {"kind": "synthetic", "prompt_tokens": 40, "output_tokens": "uniform(1,8)",
                                      "path": None}})
    assert workload_text(run) == "synthetic, prompt tokens 40, output tokens uniform(1,8)"
    assert [workload_text(Run.from_json(r)) for r in ({"workload": {"kind": None}}, {}, {"workload": {"x": 1}})] \
        == ["None", "–", "?"]
