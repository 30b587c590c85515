"""The sweep and capacity pages of real runs: `goodput sweep` (three short points) and `goodput capacity`
(a ceiling and two probes) on the embedded server's sim engine write sweep.html / capacity.html at the
end; Debian's headless Chromium loads each from its file URL with networking off, logs no console error,
tries no request, and every chart draws its marks. The plotted numbers are sweep.json's and capacity.json's.
`--resume` writes sweep.html again; `--no-html` writes no page at all (nor a point's report.html).

Each browser test saves a full-page screenshot under its pytest tmp dir and prints the path.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from loadgen.cli import run_cli
from tests.exporters._browser import browser_page, chromium_path, open_report

pytestmark = pytest.mark.slow
needs_chromium = pytest.mark.skipif(chromium_path() is None, reason="chromium is not installed (apt-get install chromium)")

# The sim engine (roofline clock, no model) with short requests: a steady target a busy machine keeps up with.
SIM = ["--server-arg=--engine=sim", "--prompt-tokens", "32", "--output-tokens", "4", "--server-metrics", "none",
       "--lag-threshold", "200ms", "--slo", "ttft=1s", "--quiet"]


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("html-sweep") / "sweep"
    assert run_cli(["sweep", "--rates", "5,10,20", "--point-duration", "1.5s", "--output", str(out), *SIM]) == 0
    return out


@pytest.fixture(scope="module")
def capacity_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("html-capacity") / "cap"
    code = run_cli(["capacity", "--concurrency", "8", "--point-duration", "1.5s", "--max-points", "3",
                    "--server-arg=--sim-gpu=L4", "--output", str(out), *SIM])
    assert code == 0
    return out


def figures(page: Path) -> dict[str, dict[str, Any]]:
    """Each chart's figure JSON in the page, by title."""
    found = re.findall(r'<script type="application/json" id="fig-\d+">(.*?)</script>', page.read_text(), re.S)
    specs = [json.loads(s.replace("<\\/", "</")) for s in found]
    return {f["layout"]["title"]["text"]: f for f in specs}


def check_in_browser(page_path: Path, shot: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    with browser_page() as (page, loaded):
        open_report(page, loaded, page_path)
        assert loaded.console_errors == [] and loaded.page_errors == []
        assert loaded.network == []
        assert len(loaded.charts) == len(figures(page_path)) >= 3
        empty = [c["title"] for c in loaded.charts if not (c["drawn"] and c["marks"] > 0)]
        assert empty == [], f"charts without marks: {empty}"
        page.locator("details.data-table summary").first.click()
        page.wait_for_function("() => document.querySelectorAll('details.data-table[open] tr').length > 2",
                               timeout=30_000)
        page.screenshot(path=str(shot), full_page=True)
    with capsys.disabled():
        print(f"\nscreenshot: {shot}")
    return loaded.charts


def test_sweep_html_plots_sweep_jsons_numbers_and_links_each_point(sweep_dir: Path) -> None:
    doc = json.loads((sweep_dir / "sweep.json").read_text())
    rows = sorted((p["row"] for p in doc["points"]), key=lambda r: r["value"])
    assert [r["status"] for r in rows] == ["done"] * 3
    charts = figures(sweep_dir / "sweep.html")
    for key, name in (("ttft", "TTFT"), ("itl", "ITL per chunk"), ("tpot", "TPOT"), ("e2e", "E2E")):
        p99 = next(t for t in charts[f"{name} p50 and p99 against throughput"]["data"] if t["name"] == f"{name} p99")
        assert p99["y"] == pytest.approx([r[f"{key}_p99_s"] * 1e3 for r in rows], rel=1e-5)
        assert p99["x"] == pytest.approx([r["requests_per_s"] for r in rows], rel=1e-5)
    attainment = charts["SLO attainment against the load, target 90 %"]
    plotted = {x: y for t in attainment["data"] if "error_y" in t for x, y in zip(t["x"], t["y"], strict=True)}
    assert plotted == {r["value"]: pytest.approx(r["attainment"] * 100, rel=1e-5) for r in rows}
    html = (sweep_dir / "sweep.html").read_text()
    for r in rows:
        assert (sweep_dir / "points" / r["label"] / "report.html").is_file()
        assert f'<a href="points/{r["label"]}/report.html">' in html


@needs_chromium
def test_sweep_html_renders(sweep_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    charts = check_in_browser(sweep_dir / "sweep.html", tmp_path / "sweep-report.png", capsys)
    assert {"TTFT p50 and p99 against throughput", "SLO attainment against the load, target 90 %",
            "Goodput and throughput against the load", "Failed requests per point",
            "Client dispatch lag p99 per point"} <= {c["title"] for c in charts}


def test_capacity_html_plots_capacity_jsons_numbers(capacity_dir: Path) -> None:
    doc = json.loads((capacity_dir / "capacity.json").read_text())
    charts = figures(capacity_dir / "capacity.html")
    attainment = charts[f"SLO attainment against rate, target {doc['capacity']['target'] * 100:g} %"]
    plotted = {x: (y, lo, hi) for t in attainment["data"] if "error_y" in t
               for x, y, (lo, hi) in zip(t["x"], t["y"], t["customdata"], strict=True)}
    assert sorted(plotted) == [e["rate"] for e in doc["rates"] if e["attainment"] is not None] and plotted
    for e in doc["rates"]:
        if e["interval"] is not None:
            assert plotted[e["rate"]] == pytest.approx([e["attainment"] * 100, *(v * 100 for v in e["interval"])],
                                                       rel=1e-5)
    spent = charts[f"Requests spent: {doc['capacity']['requests']:,} in {doc['capacity']['points']} runs"]
    so_far = next(t for t in spent["data"] if t["name"] == "requests sent so far")
    assert so_far["y"][-1] == doc["capacity"]["requests"]
    html = (capacity_dir / "capacity.html").read_text()
    for row in doc["points"]:
        assert f'<a href="points/{row["label"]}/report.html">' in html


@needs_chromium
def test_capacity_html_renders(capacity_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    charts = check_in_browser(capacity_dir / "capacity.html", tmp_path / "capacity-report.png", capsys)
    assert "The search: the rate of each run, in the order run" in {c["title"] for c in charts}


def _unfinish_last_point(sweep: Path) -> str:
    doc = json.loads((sweep / "sweep.json").read_text())
    doc["points"][-1]["row"]["status"] = "pending"
    (sweep / "sweep.json").write_text(json.dumps(doc))
    (sweep / "sweep.html").unlink(missing_ok=True)
    return str(doc["points"][-1]["plan"]["label"])


def test_resume_writes_sweep_html_again_unless_no_html(sweep_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "sweep"
    shutil.copytree(sweep_dir, copy)
    label = _unfinish_last_point(copy)
    assert run_cli(["sweep", "--resume", str(copy), "--quiet"]) == 0
    assert f'<a href="points/{label}/report.html">' in (copy / "sweep.html").read_text()
    assert (copy / "points" / label / "report.html").is_file()
    _unfinish_last_point(copy)
    assert run_cli(["sweep", "--resume", str(copy), "--quiet", "--no-html"]) == 0
    assert not (copy / "sweep.html").exists() and not (copy / "points" / label / "report.html").exists()
    assert (copy / "points" / label / "summary.json").is_file()  # the point ran again
    assert json.loads((copy / "sweep.json").read_text())["spec"]["outputs"]["html"] is False  # as a later resume runs


def test_capacity_no_html_writes_no_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cap"
    assert run_cli(["capacity", "--min-rate", "4", "--max-rate", "8", "--max-points", "1", "--point-requests", "6",
                    "--no-html", "--output", str(out), *SIM]) == 0
    assert "capacity.html" not in capsys.readouterr().out
    assert (out / "capacity.json").is_file() and not (out / "capacity.html").exists()
    assert not list(out.glob("points/*/report.html")) and list(out.glob("points/*/summary.json"))


def test_a_page_that_cannot_be_written_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cap"
    (out / "capacity.html").mkdir(parents=True)  # in the way of the page
    assert run_cli(["capacity", "--min-rate", "4", "--max-rate", "8", "--max-points", "1", "--point-requests", "6",
                    "--output", str(out), *SIM]) == 1
    captured = capsys.readouterr()
    assert "goodput capacity: error: cannot write" in captured.err and "capacity.html" in captured.err
    assert (out / "capacity.json").is_file() and "capacity.html" not in captured.out.splitlines()[-1]
