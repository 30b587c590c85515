"""How much a report weighs: one run's page embeds plotly.js's basic build (every chart the reports draw),
and the points of a sweep or capacity search share one copy of it in the search's directory, loaded by a
relative path. The pages themselves are checked in a browser by test_html_layout_browser.py."""

from __future__ import annotations

import re
from pathlib import Path

from exporters.html.assets import LIBRARY_FILE, plotly_js, plotly_js_version
from exporters.html.write import REPORT_FILE
from loadgen.run.html_report import write_run_report
from tests.exporters._html_runs import with_server_timing, write_run
from tests.exporters._records import random_records

RUN_PAGE_LIMIT = 1_500_000  # bytes: a 160-request run's report.html
LIBRARY_SRC = re.compile(r'<script src="([^"]+)"></script>')


def test_a_160_request_run_page_is_under_the_limit_and_self_contained(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "run", with_server_timing(random_records(160, error_every=9)))
    page = write_run_report(run_dir).read_text()
    assert len(page.encode()) <= RUN_PAGE_LIMIT
    assert LIBRARY_SRC.search(page) is None and plotly_js()[:400] in page  # the library inline, nothing loaded
    assert not (tmp_path / LIBRARY_FILE).exists()


def test_the_library_is_plotlys_basic_build_of_a_known_version() -> None:
    source = plotly_js()
    assert source.lstrip("/*\n ").startswith("plotly.js (basic - minified) v")
    assert re.fullmatch(r"\d+\.\d+\.\d+", plotly_js_version())
    # The trace types the reports draw are registered in it.
    for trace in ("scatter", "bar"):
        assert f'moduleType:"trace",name:"{trace}"' in source


def test_points_of_a_search_share_one_copy_of_the_library(tmp_path: Path) -> None:
    search = tmp_path / "cap"
    pages = []
    for n, label in enumerate(("01-rate-2", "02-rate-4", "03-rate-8")):
        run_dir = write_run(search / "points" / label, with_server_timing(random_records(60, seed=n)))
        pages.append(write_run_report(run_dir))
    library = search / LIBRARY_FILE
    assert library.read_text() == plotly_js()
    for page in pages:
        text = page.read_text()
        assert LIBRARY_SRC.findall(text) == [f"../../{LIBRARY_FILE}"]
        assert (page.parent / "../.." / LIBRARY_FILE).resolve() == library.resolve()
        assert len(text.encode()) < 400_000 and plotly_js()[:400] not in text
    # The same point written elsewhere (goodput report DIR --html PATH) embeds the library again.
    elsewhere = write_run_report(search / "points" / "01-rate-2", path=tmp_path / "alone.html").read_text()
    assert LIBRARY_SRC.search(elsewhere) is None and plotly_js()[:400] in elsewhere
    assert sorted(p.name for p in search.iterdir()) == [LIBRARY_FILE, "points"]
    assert all((search / "points" / p.parent.name / REPORT_FILE).is_file() for p in pages)
