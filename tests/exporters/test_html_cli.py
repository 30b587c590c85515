"""`goodput report DIR --html [PATH]` and `goodput compare BASE... CAND --html PATH`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from loadgen.cli import run_cli
from tests.exporters._html_runs import RUN, with_server_timing, write_run
from tests.exporters._records import random_records


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return write_run(tmp_path / "run", with_server_timing(random_records(60, error_every=6)))


def chart_titles(html: str) -> list[str]:
    return re.findall(r'<div class="chart" data-spec="fig-\d+" role="img" aria-label="([^"]*)"', html)


def test_report_html_writes_report_html_in_the_run(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["report", str(run_dir), "--html"]) == 0
    assert f"HTML report: {run_dir / 'report.html'}" in capsys.readouterr().out
    titles = chart_titles((run_dir / "report.html").read_text())
    assert "TTFT: distribution (CDF)" in titles and "Requests in flight" in titles


def test_report_html_path(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "elsewhere.html"
    assert run_cli(["report", str(run_dir), "--quiet", "--html", str(out)]) == 0
    assert out.is_file() and not (run_dir / "report.html").exists()
    assert run_cli(["report", str(run_dir), "--quiet"]) == 0
    assert not (run_dir / "report.html").exists()  # only when asked for


def test_report_html_judges_the_runs_thresholds(tmp_path: Path) -> None:
    gated = {k: v for k, v in RUN.items() if k != "settings"}
    gated.update(schema_version=2, resolved={},
                 spec={"gate": {"thresholds": ["ttft:p(99) < 10s", "errors:rate < 1%"]}})
    run_dir = write_run(tmp_path / "gated", random_records(30, error_every=3), run=gated)
    assert run_cli(["report", str(run_dir), "--quiet", "--html"]) == 0
    rows = re.findall(r'<td class="(pass|fail)">(PASS|FAIL)</td><td class="text">([^<]*)</td>',
                      (run_dir / "report.html").read_text())
    assert rows == [("pass", "PASS", "ttft:p(99) &lt; 10s"), ("fail", "FAIL", "errors:rate &lt; 1%")]
    ungated = write_run(tmp_path / "ungated", random_records(30))
    assert run_cli(["report", str(ungated), "--quiet", "--html"]) == 0
    assert "No thresholds were given" in (ungated / "report.html").read_text()


@pytest.mark.parametrize(("args", "needle"), [
    (["{run}", "{out}"], "goes after --html"),
    (["{run}", "--html", "{tmp}"], "is a directory"),
])
def test_report_html_usage_errors(run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  args: list[str], needle: str) -> None:
    argv = [a.format(run=run_dir, out=tmp_path / "x.html", tmp=tmp_path) for a in args]
    assert run_cli(["report", *argv]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1


def test_compare_html_overlays_every_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base1 = write_run(tmp_path / "base1", random_records(80, seed=1))
    base2 = write_run(tmp_path / "base2", random_records(80, seed=2))
    cand = write_run(tmp_path / "cand", random_records(80, seed=3, error_every=3))
    out = tmp_path / "compare.html"
    assert run_cli(["compare", str(base1), str(base2), str(cand), "--html", str(out), "--resamples", "200"]) == 0
    assert f"HTML report: {out}" in capsys.readouterr().out
    html = out.read_text()
    assert "TTFT: distribution (CDF) per run" in chart_titles(html)
    for label in ("candidate", "baseline 1", "baseline 2"):
        assert f"{label} (" in html  # a line per run, in the figures' JSON
    assert "goodput:attainment" in html  # the comparison table


def test_compare_html_into_a_directory_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = write_run(tmp_path / "base", random_records(20, seed=1))
    cand = write_run(tmp_path / "cand", random_records(20, seed=2))
    assert run_cli(["compare", str(base), str(cand), "--html", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
