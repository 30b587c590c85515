"""The sweep page (sweep.html): each plotted number is sweep.json's, the attainment intervals and the
capacity follow `goodput capacity`'s rule, the flags, the table of points and its links."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from exporters.html.page import Chart, Page, Table, Text
from exporters.html.sweep_data import LATENCY_METRICS, latency_series, load_points, sweep_capacity, sweep_rows
from exporters.html.sweep_page import sweep_page
from exporters.html.sweep_write import write_sweep_report
from loadgen.sweep.points import plan_point
from metrics.capacity_search.proportion import wilson_interval
from metrics.results import SweepView
from tests.exporters._sweep_docs import LENGTH, rate_point, summary, sweep_doc, with_spec

# (rate, good, measured), planned out of order: the charts sort by load
POINTS = [(6.0, 150, 200), (2.0, 200, 200), (8.0, 100, 200), (4.0, 195, 200)]


def charts(page: Page) -> dict[str, dict[str, Any]]:
    return {i.title: i.figure for s in page.sections for i in s.items if isinstance(i, Chart)}


def trace(figure: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in figure["data"] if t["name"].startswith(name))


def approx(values: list[float], scale: float = 1.0) -> Any:
    return pytest.approx([v * scale for v in values], rel=1e-5)


@pytest.fixture
def doc() -> SweepView:
    return sweep_doc([(rate_point(i, r), summary(g, n, rps=r, failed=n - g if r == 8.0 else 0))
                      for i, (r, g, n) in enumerate(POINTS, start=1)])


def test_latency_against_throughput_plots_sweep_jsons_percentiles(doc: SweepView) -> None:
    rows = sorted((p.row for p in doc.points), key=lambda r: r.value)
    figures = charts(sweep_page(doc, "s"))
    for metric, name, _ in LATENCY_METRICS:
        figure = figures[f"{name} p50 and p99 against throughput"]
        for p in ("p50", "p99"):
            line = trace(figure, f"{name} {p}")
            assert line["x"] == approx([r.requests_per_s for r in rows])
            assert line["y"] == approx([r.percentile(metric, p) for r in rows], 1e3)  # ms
            assert line["text"] == ["02-rate-2", "04-rate-4", "01-rate-6", "03-rate-8"]
    assert latency_series(load_points(sweep_rows(doc)), "tpot", "p99").y == [r.tpot_p99_s for r in rows]
    ttft = figures["TTFT p50 and p99 against throughput"]
    assert trace(ttft, "SLO TTFT ≤ 200 ms")["y"] == [200.0, 200.0]
    assert trace(ttft, "SLO TTFT").get("visible", True) is True  # within reach of the points: drawn


def test_attainment_intervals_and_the_capacity_by_the_searchs_rule(doc: SweepView) -> None:
    capacity = sweep_capacity(load_points(sweep_rows(doc)))
    assert capacity is not None and (capacity.capacity, capacity.upper) == (4.0, 6.0)
    figure = charts(sweep_page(doc, "s"))["SLO attainment against the load, target 90 %"]
    passed, failed = trace(figure, "pass"), trace(figure, "fail")
    assert passed["x"] == [2.0, 4.0] and failed["x"] == [6.0, 8.0]
    for t, counts in ((passed, [(200, 200), (195, 200)]), (failed, [(150, 200), (100, 200)])):
        assert t["y"] == approx([g / n for g, n in counts], 100)
        intervals = [wilson_interval(g, n, 0.95) for g, n in counts]
        assert [c[0] for c in t["customdata"]] == approx([lo for lo, _ in intervals], 100)
        assert [y + e for y, e in zip(t["y"], t["error_y"]["array"], strict=True)] == approx([hi for _, hi in intervals], 100)
        assert [y - e for y, e in zip(t["y"], t["error_y"]["arrayminus"], strict=True)] == approx([lo for lo, _ in intervals], 100)
    assert trace(figure, "target 90 %")["y"] == [90.0, 90.0]
    assert trace(figure, "capacity 4 req/s")["x"] == [4.0, 4.0]
    assert trace(figure, "lowest rate not shown to pass 6 req/s")["x"] == [6.0, 6.0]
    band = figure["layout"]["shapes"][0]
    assert (band["x0"], band["x1"]) == (4.0, 6.0)
    goodput = charts(sweep_page(doc, "s"))["Goodput and throughput against the load"]
    rows = sorted((p.row for p in doc.points), key=lambda r: r.value)
    assert trace(goodput, "goodput")["y"] == approx([r.goodput_rps for r in rows])


def test_a_pass_above_a_failure_and_a_saturated_client_are_not_claimed() -> None:
    points = [(rate_point(1, 2.0), summary(200, 200, rps=2)), (rate_point(2, 4.0), summary(200, 200, rps=4, saturated=True)),
              (rate_point(3, 6.0), summary(120, 200, rps=6)), (rate_point(4, 8.0), summary(200, 200, rps=8))]
    doc = sweep_doc(points)
    capacity = sweep_capacity(load_points(sweep_rows(doc)))
    assert capacity is not None and (capacity.capacity, capacity.upper) == (2.0, 6.0)
    page = sweep_page(doc, "s")
    figure = charts(page)["SLO attainment against the load, target 90 %"]
    assert trace(figure, "not evidence")["x"] == [4.0]
    assert trace(figure, "pass")["x"] == [2.0, 8.0]  # shown to pass, yet above a failure: not the capacity
    assert trace(figure, "capacity 2 req/s")["x"] == [2.0, 2.0]
    assert [f.title for f in page.flags] == ["Client saturated."] and "02-rate-4" in page.flags[0].text
    lag = charts(page)["Client dispatch lag p99 per point"]
    assert trace(lag, "client saturated")["x"] == ["02-rate-4"]


def test_a_closed_loop_sweep_has_no_capacity() -> None:
    plans = [plan_point(i, "concurrency", c, LENGTH, seed=0) for i, c in enumerate((1, 4, 16), start=1)]
    doc = sweep_doc([(p, summary(200, 200, rps=p.value * 2)) for p in plans], mode={"concurrencies": [1, 4, 16]})
    page = sweep_page(doc, "s")
    figure = charts(page)["SLO attainment against the load, target 90 %"]
    assert figure["layout"]["xaxis"]["title"]["text"] == "concurrency (requests kept in flight)"
    assert trace(figure, "each point")["x"] == [1.0, 4.0, 16.0]
    assert not [t for t in figure["data"] if t["name"].startswith("capacity")]
    goodput = charts(page)["Goodput and throughput against the load"]
    assert not [t for t in goodput["data"] if t["name"].startswith("offered rate")]
    texts = [i.text for s in page.sections for i in s.items if isinstance(i, Text)]
    assert any(t.startswith("Capacity: not read from this sweep") for t in texts)


def test_an_auto_sweeps_ceiling_is_drawn_apart() -> None:
    ceiling = plan_point(0, "concurrency", 8, LENGTH, seed=0, role="ceiling")
    ceiling_summary = summary(80, 80, rps=10.0)
    doc = sweep_doc([(ceiling, ceiling_summary), (rate_point(1, 3.0), summary(200, 200, rps=3)),
                     (rate_point(2, 6.0), summary(200, 200, rps=6))],
                    mode={"auto": {"points": 2, "concurrency": 8}},
                    ceiling={"concurrency": 8, "requests_per_s": 9.8, "label": "00-ceiling-c8"})
    assert [r.label for r in load_points(sweep_rows(doc))] == ["01-rate-3", "02-rate-6"]
    figures = charts(sweep_page(doc, "s"))
    ttft = figures["TTFT p50 and p99 against throughput"]
    assert trace(ttft, "TTFT p99")["text"] == ["01-rate-3", "02-rate-6"]
    assert trace(ttft, "ceiling 00-ceiling-c8 p99")["y"] == approx([ceiling_summary["latency"]["ttft_s"]["p99"]], 1e3)
    assert trace(figures["Goodput and throughput against the load"], "throughput ceiling")["y"] == [9.8, 9.8]
    assert trace(figures["SLO attainment against the load, target 90 %"], "throughput ceiling")["x"] == [9.8, 9.8]


def test_an_unfinished_sweep_says_what_is_missing() -> None:
    doc = sweep_doc([(rate_point(1, 2.0), summary(200, 200, rps=2)), (rate_point(2, 4.0), None)], interrupted=True)
    page = sweep_page(doc, "s")
    assert [f.title for f in page.flags] == ["Interrupted.", "Incomplete."] and "02-rate-4" in page.flags[1].text
    table = next(i for s in page.sections for i in s.items if isinstance(i, Table))
    assert [row[1].text for row in table.rows] == ["done", "pending"]  # type: ignore[union-attr]
    assert trace(charts(page)["TTFT p50 and p99 against throughput"], "TTFT p99")["text"] == ["01-rate-2"]
    ceiling_only = sweep_doc([(plan_point(0, "concurrency", 8, LENGTH, seed=0, role="ceiling"), summary(9, 9, rps=3)),
                              (rate_point(1, 2.0), None)], mode={"auto": {"points": 2, "concurrency": 8}})
    titles = list(charts(sweep_page(ceiling_only, "s")))  # interrupted before its rates: only the ceiling ran
    assert titles == ["Failed requests per point", "Client dispatch lag p99 per point"]
    nothing = sweep_page(sweep_doc([(rate_point(1, 2.0), None)]), "s")
    assert [s.title for s in nothing.sections] == ["Points"] and not charts(nothing)


def test_a_limit_far_above_every_point_is_drawn_on_demand() -> None:
    doc = sweep_doc([(rate_point(1, 2.0), summary(200, 200, rps=2, ttft_s=0.001, lag_s=0.005))])
    rule = trace(charts(sweep_page(doc, "s"))["TTFT p50 and p99 against throughput"], "SLO TTFT")
    assert rule["visible"] == "legendonly" and "far above every point" in rule["name"]
    assert rule["y"] == [200.0, 200.0]  # still in the table view
    lag = charts(sweep_page(doc, "s"))["Client dispatch lag p99 per point"]  # 5 ms against the default 10 ms
    assert trace(lag, "saturation threshold 10 ms").get("visible", True) is True
    doc = with_spec(doc, lag_threshold_s=0.2)
    lag = charts(sweep_page(doc, "s"))["Client dispatch lag p99 per point"]
    assert trace(lag, "saturation threshold 200 ms")["visible"] == "legendonly"


def test_written_page_links_each_points_report(doc: dict[str, Any], tmp_path: Path) -> None:
    sweep_dir = tmp_path / "sweep"
    (sweep_dir / "points" / "02-rate-2").mkdir(parents=True)
    (sweep_dir / "points" / "02-rate-2" / "report.html").write_text("<html></html>")
    (sweep_dir / "points" / "02-rate-2" / "run.json").write_text(json.dumps(
        {"model": "tiny-model", "workload": {"kind": "synthetic", "prompt_tokens": "32"}}))
    (sweep_dir / "sweep.json").write_text(json.dumps(doc.to_json()))
    out = write_sweep_report(sweep_dir)
    html = out.read_text()
    assert out == sweep_dir / "sweep.html"
    assert '<a href="points/02-rate-2/report.html">02-rate-2</a>' in html
    assert html.count("<a href=\"points/") == 1  # the others have no report.html
    assert "tiny-model" in html and "synthetic, prompt tokens 32" in html
    assert html.count('<div class="chart"') == html.count('<details class="data-table"') == 8
    (tmp_path / "pages").mkdir()
    elsewhere = write_sweep_report(sweep_dir, path=tmp_path / "pages" / "s.html")
    assert '<a href="../sweep/points/02-rate-2/report.html">' in elsewhere.read_text()
    (sweep_dir / "sweep.json").write_text('{"kind": "capacity", "points": []}')
    with pytest.raises(ValueError, match=r"is not a sweep\.json written by goodput sweep"):
        write_sweep_report(sweep_dir)
