"""server_metrics.jsonl read back for the report: each line's numbers checked once, where it is read."""

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
