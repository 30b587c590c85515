"""The report's layout in a real browser (headless Chromium, networking off): the linear/log buttons of a
chart stay clear of plotly's mode bar and of the chart's title, and a point of a search draws every chart
from the plotting library its directory shares. Skipped only when Chromium is not installed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from loadgen.run.html_report import write_run_report
from tests.exporters._browser import browser_page, chromium_path, open_report
from tests.exporters._html_runs import RUN, with_server_timing, write_run
from tests.exporters._records import random_records

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(chromium_path() is None, reason="chromium is not installed (apt-get install chromium)"),
]

# Per chart with update menus: the boxes (left, top, right, bottom) of its menu buttons, of the mode bar's
# buttons and of its title, taken while the pointer is over the chart (the mode bar shows on hover).
BOXES_JS = """(el) => {
  const boxes = (q) => Array.from(el.querySelectorAll(q)).map((e) => {
    const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; });
  return {menu: boxes("g.updatemenu-button"), bar: boxes(".modebar-btn"), title: boxes(".gtitle"),
          notes: boxes("g.annotation-text-g")};
}"""


def overlaps(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_log_buttons_clear_the_mode_bar_the_title_and_band_labels(tmp_path: Path) -> None:
    run = {**RUN, "settings": {**RUN["settings"], "warmup_s": 0.5, "cooldown_s": 0.8}}  # labelled bands at both ends
    report = write_run_report(write_run(tmp_path / "run", with_server_timing(random_records(80)), run))
    clashes: list[str] = []
    seen = notes = 0
    with browser_page(width=1100) as (page, loaded):
        open_report(page, loaded, report)
        for chart in page.query_selector_all("div.chart:has(g.updatemenu-container)"):
            chart.scroll_into_view_if_needed()
            chart.hover()
            page.wait_for_timeout(300)
            found: dict[str, Any] = chart.evaluate(BOXES_JS)
            assert found["menu"] and found["bar"]
            seen += 1
            title = chart.get_attribute("aria-label")
            clashes += [f"{title}: buttons over the mode bar" for m in found["menu"] for b in found["bar"] if overlaps(m, b)]
            clashes += [f"{title}: buttons over the title" for m in found["menu"] for t in found["title"] if overlaps(m, t)]
            clashes += [f"{title}: buttons over a band's label" for m in found["menu"] for t in found["notes"]
                        if overlaps(m, t)]
            notes += len(found["notes"])
        assert loaded.console_errors == [] and loaded.page_errors == []
    assert seen >= 3 and notes >= 2 and clashes == []


def test_a_point_of_a_search_draws_from_the_shared_library(tmp_path: Path) -> None:
    point = write_run(tmp_path / "search" / "points" / "01-rate-4", with_server_timing(random_records(40)))
    report = write_run_report(point)
    with browser_page() as (page, loaded):
        open_report(page, loaded, report)
        assert loaded.console_errors == [] and loaded.page_errors == [] and loaded.network == []
        assert len(loaded.charts) >= 10 and all(c["drawn"] and c["marks"] > 0 for c in loaded.charts)
    # Moved away from its directory, the page says why its charts are missing instead of failing silently.
    moved = tmp_path / "moved.html"
    moved.write_bytes(report.read_bytes())
    with browser_page() as (page, loaded):
        open_report(page, loaded, moved)
        assert all(not c["drawn"] for c in loaded.charts)
        assert "plotly.js did not load" in page.inner_text("div.chart")
