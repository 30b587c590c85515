"""The HTML reports in a real browser: Debian's headless Chromium loads each kind of report from a file
URL with networking off, logs no console error, tries no request, and every chart container has drawn
its marks. Reports of real runs: `goodput run` with no --url (the embedded reference server, on its sim
engine: the pages do not depend on the torch model, which takes four times as long to start), a run
against it with most requests failing by fault injection, and `goodput compare` of the two.

Each test saves a full-page screenshot under its pytest tmp dir and prints the path (`pytest -s` shows
it; CI keeps it as an artifact path in the log). Skipped, saying why, only when Chromium is not installed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.exporters._browser import browser_page, chromium_path, open_report

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(chromium_path() is None, reason="chromium is not installed (apt-get install chromium)"),
]

GOODPUT = str(Path(sys.executable).with_name("goodput"))
SMALL_RUN = ["--server-arg=--engine=sim", "--requests", "30", "--rate", "10", "--prompt-tokens", "64", "--output-tokens", "32",
             "--slo", "ttft=300ms", "--slo", "tpot=30ms", "--server-metrics-interval", "0.5s", "--quiet"]
FAULTS = ["--server-arg=--fault-500", "--server-arg=0.45", "--server-arg=--fault-disconnect", "--server-arg=0.2",
          "--server-arg=--fault-malformed", "--server-arg=0.15", "--max-failed", "100%"]  # failures are the point


def goodput(*args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([GOODPUT, *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"goodput {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two real runs against the embedded reference server, each with its report.html: the first written by
    `goodput run` itself, the second (run with --no-html) by `goodput report --html`."""
    root = tmp_path_factory.mktemp("html-runs")
    real, faults = root / "real", root / "faults"
    goodput("run", *SMALL_RUN, "--threshold", "ttft:p(99)<60s", "--model-config", "Llama-3.1-8B", "--gpu", "H100-SXM",
            "--output", str(real))
    assert (real / "report.html").is_file()
    goodput("run", *SMALL_RUN, *FAULTS, "--no-html", "--output", str(faults))
    assert not (faults / "report.html").exists()
    goodput("report", str(faults), "--quiet", "--html")
    return {"real": real, "faults": faults}


def check_in_browser(report: Path, shot: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    """Load the report, check it, open one table view, save a screenshot; return its charts."""
    with browser_page() as (page, loaded):
        open_report(page, loaded, report)
        assert loaded.console_errors == [] and loaded.page_errors == []
        assert loaded.network == []  # nothing tried to leave the disk
        specs = page.evaluate("() => document.querySelectorAll('script[type=\"application/json\"]').length")
        assert len(loaded.charts) == specs >= 5
        empty = [c["title"] for c in loaded.charts if not (c["drawn"] and c["marks"] > 0)]
        assert empty == [], f"charts without marks: {empty}"
        page.locator("details.data-table summary").first.click()
        # The table view of the first chart, built from its JSON when opened (the toggle event comes later).
        page.wait_for_function("() => document.querySelectorAll('details.data-table[open] tr').length > 2",
                               timeout=30_000)
        page.screenshot(path=str(shot), full_page=True)
    with capsys.disabled():  # in the test log whatever the capture mode: where CI finds the artifact
        print(f"\nscreenshot: {shot}")
    return loaded.charts


def test_report_of_a_real_run_renders(runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    charts = check_in_browser(runs["real"] / "report.html", tmp_path / "real-run-report.png", capsys)
    titles = {c["title"] for c in charts}
    assert {"TTFT: distribution (CDF)", "TTFT of each request over time", "Requests in flight",
            "dispatch lag of each request over time", "Client − server TTFT (network and client overhead)",
            "Server: requests running and waiting",
            "Measured p50 beside the roofline floors of Llama-3.1-8B on H100-SXM (tp 1)"} <= titles
    html = (runs["real"] / "report.html").read_text()
    assert '<td class="pass">PASS</td>' in html  # the run's threshold, judged


def test_report_of_a_mostly_failed_run_renders(runs: dict[str, Path], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    summary = json.loads((runs["faults"] / "summary.json").read_text())
    assert summary["requests"]["failed"] > summary["requests"]["records"] / 2  # most requests failed
    charts = check_in_browser(runs["faults"] / "report.html", tmp_path / "faults-run-report.png", capsys)
    failures = [c for c in charts if c["title"].startswith("Failed and cancelled requests")]
    assert failures and failures[0]["marks"] >= len(summary["requests"]["errors"])


def test_compare_report_renders(runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "compare.html"
    goodput("compare", str(runs["real"]), str(runs["faults"]), "--html", str(out), "--output",
            str(tmp_path / "compare.md"), "--resamples", "200")
    charts = check_in_browser(out, tmp_path / "compare-report.png", capsys)
    assert "TTFT: distribution (CDF) per run" in {c["title"] for c in charts}
