"""The capacity page (capacity.html): each probed rate's attainment and interval are capacity.json's, the
bracket and the capacity are drawn where capacity.json puts them, the probes in the order run with the
requests they spent, and the verdict line heads the page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from exporters.html.capacity_data import probe_runs
from exporters.html.capacity_page import capacity_page
from exporters.html.page import Chart, Page, Table
from exporters.html.sweep_write import write_capacity_report
from metrics.capacity_search.proportion import wilson_interval
from metrics.capacity_search.search import SearchSettings, Stop
from metrics.results import CapacityView, replace
from tests.exporters._sweep_docs import capacity_doc

# (rate, good, measured) in the order run: 12 is undecided, then passes pooled with its second run
RUNS = [(8.0, 200, 200), (16.0, 100, 200), (12.0, 185, 200), (12.0, 198, 200), (14.0, 150, 200)]
LINE = "capacity 12 req/s at 90 % attainment (95 % conf.; bracket 12–14 req/s; 6 points, 1,018 requests)"


def charts(page: Page) -> dict[str, dict[str, Any]]:
    return {i.title: i.figure for s in page.sections for i in s.items if isinstance(i, Chart)}


def trace(figure: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in figure["data"] if t["name"].startswith(name))


@pytest.fixture
def doc() -> CapacityView:
    return capacity_doc(RUNS, ceiling_rps=20.0)


def test_each_rates_attainment_and_interval_are_capacity_jsons(doc: CapacityView) -> None:
    assert (doc.capacity.rate, doc.capacity.upper) == (12.0, 14.0)
    figure = charts(capacity_page(doc, "cap", LINE))["SLO attainment against rate, target 90 %"]
    plotted = {}
    for t in figure["data"]:
        if "error_y" in t:
            for x, y, (lo, hi), plus, minus in zip(t["x"], t["y"], t["customdata"], t["error_y"]["array"],
                                                   t["error_y"]["arrayminus"], strict=True):
                plotted[x] = (t["name"].split(":")[0], y, lo, hi, y + plus, y - minus)
    assert sorted(plotted) == [e.rate for e in doc.rates] == [8.0, 12.0, 14.0, 16.0]
    for e in doc.rates:
        verdict, y, lo, hi, top, bottom = plotted[e.rate]
        assert verdict == e.verdict and e.attainment is not None and e.interval is not None
        assert y == pytest.approx(e.attainment * 100, rel=1e-5)
        assert (lo, hi) == pytest.approx([v * 100 for v in e.interval], rel=1e-5)
        assert (bottom, top) == pytest.approx([v * 100 for v in e.interval], rel=1e-5)
    assert plotted[12.0][1] == pytest.approx(383 / 400 * 100, rel=1e-5)  # pooled over both runs at 12
    band = figure["layout"]["shapes"][0]
    assert (band["x0"], band["x1"]) == (12.0, 14.0)
    assert trace(figure, "bracket 12–14 req/s")["x"] == [12.0, 14.0]
    assert trace(figure, "capacity 12 req/s")["x"] == [12.0, 12.0]
    assert trace(figure, "lowest rate not shown to pass 14 req/s")["x"] == [14.0, 14.0]
    assert trace(figure, "target 90 %")["y"] == [90.0, 90.0]
    assert trace(figure, "each run alone")["x"] == [8.0, 16.0, 12.0, 12.0, 14.0]
    assert trace(figure, "throughput ceiling")["x"] == [19.6, 19.6]


def test_the_probes_in_order_with_the_requests_they_spent(doc: CapacityView) -> None:
    runs = probe_runs(doc)
    assert [r.label for r in runs] == ["00-ceiling-c8", "01-rate-8", "02-rate-16", "03-rate-12", "04-rate-12",
                                       "05-rate-14"]
    assert [r.verdict for r in runs[3:5]] == ["undecided", "pass"]
    assert runs[-1].spent == doc.capacity.requests == sum(r.sent or 0 for r in doc.points)
    assert runs[3].interval == wilson_interval(185, 200, 0.95)  # that run alone, not pooled
    figures = charts(capacity_page(doc, "cap", LINE))
    order = figures["The search: the rate of each run, in the order run"]
    assert trace(order, "order probed")["x"] == [2, 3, 4, 5, 6]
    assert trace(order, "order probed")["y"] == [8.0, 16.0, 12.0, 12.0, 14.0]
    assert trace(order, "throughput ceiling run")["x"] == [1]
    assert trace(order, "undecided")["text"] == ["03-rate-12"]
    assert (order["layout"]["shapes"][0]["y0"], order["layout"]["shapes"][0]["y1"]) == (12.0, 14.0)
    spent = figures[f"Requests spent: {doc.capacity.requests:,} in 6 runs"]
    assert trace(spent, "requests sent so far")["y"] == [r.spent for r in runs]


def test_the_verdict_line_heads_the_page(doc: CapacityView) -> None:
    page = capacity_page(doc, "cap", LINE)
    assert (page.flags[0].level, page.flags[0].text) == ("ok", LINE)
    verdict = next(i for s in page.sections for i in s.items if isinstance(i, Table))
    assert verdict.rows[0][1].text == "12 req/s" and verdict.rows[1][1] == "14 req/s"  # type: ignore[union-attr]
    none = capacity_doc([(4.0, 100, 200)], settings=SearchSettings(target=0.9, min_rate=4.0, max_rate=8.0),
                        stop=Stop("below_min", "no rate from --min-rate 4 req/s up was shown to pass"))
    flags = capacity_page(none, "cap", "capacity: no rate shown ...").flags
    figure = charts(capacity_page(none, "cap", "x"))["SLO attainment against rate, target 90 %"]
    assert flags[0].level == "warn" and not figure["layout"]["shapes"]  # no bracket without a pass
    assert trace(figure, "lowest rate not shown to pass 4 req/s")["x"] == [4.0, 4.0]
    assert not [t for t in figure["data"] if t["name"].startswith("capacity")]
    stopped = replace(doc, complete=False, capacity=replace(doc.capacity, status="interrupted"))
    assert [f.title for f in capacity_page(stopped, "cap", LINE).flags][:2] == ["Verdict.", "Incomplete."]
    noted = replace(doc, notes=("passed but above a rate that did not pass",))
    assert ("info", "passed but above a rate that did not pass") in [(f.level, f.text) for f in
                                                                      capacity_page(noted, "cap", LINE).flags]


def test_written_page_links_each_runs_report(doc: CapacityView, tmp_path: Path) -> None:
    (tmp_path / "points" / "03-rate-12").mkdir(parents=True)
    (tmp_path / "points" / "03-rate-12" / "report.html").write_text("<html></html>")
    (tmp_path / "capacity.json").write_text(json.dumps(doc.to_json()))
    out = write_capacity_report(tmp_path, LINE)
    html = out.read_text()
    assert out == tmp_path / "capacity.html" and LINE in html
    assert '<a href="points/03-rate-12/report.html">03-rate-12</a>' in html and html.count('<a href="points/') == 1
    assert html.count('<div class="chart"') == 3
