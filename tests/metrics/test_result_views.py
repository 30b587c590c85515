"""The typed views of sweep.json and capacity.json: a document goodput wrote reads back into typed fields and
writes back byte for byte; a value of another type reads as missing, the way the readers always read it."""

from __future__ import annotations

import json
from pathlib import Path

from metrics.capacity_search.search import Observation, SearchSettings, Stop, conclude
from metrics.results import (
    CAPACITY_FILE,
    COLUMNS,
    SWEEP_FILE,
    CapacityView,
    PointRow,
    SweepMode,
    SweepView,
    read_capacity,
    read_capacity_points,
    read_sweep,
    write_capacity,
    write_sweep,
)
from tests.exporters._sweep_docs import capacity_doc, rate_point, summary, sweep_doc


def _text(doc: dict[str, object]) -> str:
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


def test_a_sweep_json_reads_into_typed_fields_and_writes_back_byte_for_byte(tmp_path: Path) -> None:
    view = sweep_doc([(rate_point(1, 2.0), summary(200, 200, rps=2)), (rate_point(2, 4.0), summary(150, 200, rps=4)),
                      (rate_point(3, 8.0), None)], interrupted=True)
    written = _text(view.to_json())
    (tmp_path / SWEEP_FILE).write_text(written)
    back = read_sweep(tmp_path)
    assert back == view and back.mode == SweepMode(rates=(2.0, 4.0, 8.0))
    first = back.points[0].row
    # 150 of 200 good at 4 req/s; 2 req/s: summary() says 2 × 0.98 completed req/s, p99 TTFT 0.05 × 1.2 × 2 + 2e-4
    assert (back.points[1].row.good, back.points[1].row.measured, back.points[1].row.attainment) == (150, 200, 0.75)
    assert first.requests_per_s == 2 * 0.98 and first.ttft_p99_s == 0.05 * 1.2 * 2.0 + 2 * 1e-4
    assert [p.row.status for p in back.points] == ["done", "done", "pending"] and back.missing == ("03-rate-8",)
    assert back.interrupted is True and back.complete is False and back.server is not None
    assert back.server.url == "http://127.0.0.1:1" and back.server.embedded is True
    write_sweep(tmp_path, back)
    assert (tmp_path / SWEEP_FILE).read_text() == written


def test_a_capacity_json_reads_into_typed_fields_and_writes_back_byte_for_byte(tmp_path: Path) -> None:
    view = capacity_doc([(8.0, 200, 200), (16.0, 100, 200), (12.0, 198, 200)], ceiling_rps=20.0)
    written = _text(view.to_json())
    (tmp_path / CAPACITY_FILE).write_text(written)
    back = read_capacity(tmp_path)
    assert back == view == read_capacity_points(tmp_path)
    assert (back.capacity.rate, back.capacity.upper, back.capacity.target) == (12.0, 16.0, 0.9)
    assert [(r.rate, r.verdict) for r in back.rates] == [(8.0, "pass"), (12.0, "pass"), (16.0, "fail")]
    assert [(p.label, p.rate, p.verdict) for p in back.points] == [
        ("00-ceiling-c8", None, "ceiling"), ("01-rate-8", 8.0, "pass"), ("02-rate-16", 16.0, "fail"),
        ("03-rate-12", 12.0, "pass")]
    assert back.ceiling is not None and back.ceiling.requests_per_s == 20.0 * 0.98
    write_capacity(tmp_path, back)
    assert (tmp_path / CAPACITY_FILE).read_text() == written


def test_a_row_keeps_its_keys_in_goodputs_order_and_only_a_searchs_rows_carry_the_rate() -> None:
    sweep_row = {"label": "01-rate-2", "kind": "rate", "value": 2.0, "status": "pending"}
    row = PointRow.from_json(sweep_row)
    assert "rate" not in row.to_json() and "verdict" not in row.to_json()
    assert list(row.to_json()) == list(COLUMNS)  # sweep.csv's columns, in its order
    probe = PointRow.from_json({**sweep_row, "rate": None, "verdict": "ceiling", "ceiling_rps": 9.5})
    assert list(probe.to_json())[-3:] == ["rate", "verdict", "ceiling_rps"] and probe.to_json()["rate"] is None


def test_values_of_another_type_read_as_missing() -> None:
    row = PointRow.from_json({"label": "x", "value": "fast", "measured": "200", "good": True,
                              "ttft_p99_s": [1], "client_saturated": "yes"})
    assert (row.value, row.measured, row.good, row.ttft_p99_s, row.client_saturated) == (None, None, None, None, None)
    doc = CapacityView.from_json({"capacity": {"target": "high", "points": "7"}, "rates": [{"rate": "x"}, 3],
                                  "points": [1, {"label": "a"}], "notes": "n", "ceiling": [], "server": "s"})
    assert (doc.capacity.target, doc.capacity.points) == (0.9, 0)  # the readers' defaults
    assert (doc.rates, [p.label for p in doc.points], doc.notes, doc.ceiling, doc.server) == ((), ["a"], (), None, None)
    sweep = SweepView.from_json({"mode": {"concurrencies": [1, "2", 4]}, "points": [{"plan": None}, {"row": {}}]})
    assert sweep.mode.concurrencies == (1, 4) and len(sweep.points) == 1 and sweep.points[0].plan is None


def test_a_search_built_from_its_result_is_what_the_reader_reads(tmp_path: Path) -> None:
    settings = SearchSettings(target=0.9, max_rate=20.0)
    result = conclude(settings, [Observation(4.0, 200, 200)], Stop("at_least", "nothing failed"))
    assert result.capacity == 4.0
    doc = capacity_doc([(4.0, 200, 200)], settings=settings, stop=Stop("at_least", "nothing failed"))
    write_capacity(tmp_path, doc)
    assert read_capacity(tmp_path).capacity.status == "at_least" and read_capacity(tmp_path).capacity.upper is None


def test_the_views_load_on_first_use_not_with_the_package() -> None:
    """A run imports metrics.results before its first request: the views are not part of that cost."""
    import subprocess
    import sys

    code = ("import sys, metrics.results as r; before = sorted(m for m in sys.modules if m.endswith('_view')); "
            "r.SweepView; print(before, 'metrics.results.sweep_view' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] True"
