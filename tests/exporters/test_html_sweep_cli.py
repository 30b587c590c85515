"""`goodput report DIR [--html [PATH]]` on a sweep or capacity directory: its table of points, and its page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loadgen.cli import run_cli
from loadgen.sweep.html_pages import write_page_at_end
from tests.exporters._sweep_docs import capacity_doc, rate_point, summary, sweep_doc


@pytest.fixture
def sweep_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "sweep"
    directory.mkdir()
    doc = sweep_doc([(rate_point(1, 2.0), summary(200, 200, rps=2)), (rate_point(2, 4.0), summary(150, 200, rps=4))])
    (directory / "sweep.json").write_text(json.dumps(doc.to_json()))
    return directory


@pytest.fixture
def capacity_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "cap"
    directory.mkdir()
    doc = capacity_doc([(8.0, 200, 200), (16.0, 100, 200), (12.0, 198, 200)])
    (directory / "capacity.json").write_text(json.dumps(doc.to_json()))
    return directory


def test_report_html_on_a_sweep_writes_sweep_html(sweep_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["report", str(sweep_dir), "--html"]) == 0
    out = capsys.readouterr().out
    assert "01-rate-2" in out and "TTFT p50/p99" in out and f"HTML report: {sweep_dir / 'sweep.html'}" in out
    assert "SLO attainment against the load" in (sweep_dir / "sweep.html").read_text()
    assert not (sweep_dir / "report.html").exists()


def test_report_on_a_sweep_without_html_prints_its_table_only(sweep_dir: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["report", str(sweep_dir)]) == 0
    assert "02-rate-4" in capsys.readouterr().out and not (sweep_dir / "sweep.html").exists()
    elsewhere = sweep_dir.parent / "s.html"
    assert run_cli(["report", str(sweep_dir), "--quiet", "--html", str(elsewhere)]) == 0
    assert capsys.readouterr().out == "" and elsewhere.is_file() and not (sweep_dir / "sweep.html").exists()


def test_report_html_on_a_capacity_search(capacity_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["report", str(capacity_dir), "--html"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("capacity "))
    assert line.startswith("capacity 12 req/s at 90 % attainment")
    assert line in (capacity_dir / "capacity.html").read_text()  # the verdict line heads the page


@pytest.mark.parametrize(("args", "needle"), [
    (["--slo", "ttft=1s"], "--slo: only for a run directory"),
    (["--allow-damaged"], "--allow-damaged: only for a run directory"),
    (["--no-textfile"], "--textfile/--no-textfile: only for a run directory"),
])
def test_run_only_options_on_a_sweep_are_usage_errors(sweep_dir: Path, args: list[str], needle: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["report", str(sweep_dir), "--html", *args]) == 2
    assert needle in capsys.readouterr().err and not (sweep_dir / "sweep.html").exists()


def test_damaged_or_missing_results_are_usage_errors(sweep_dir: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    (sweep_dir / "sweep.json").write_text("{not json")
    assert run_cli(["report", str(sweep_dir), "--html"]) == 2
    assert "sweep.json is not valid JSON" in capsys.readouterr().err
    (sweep_dir / "sweep.json").write_text(json.dumps({"kind": "sweep", "points": [{"plan": {}}]}))
    assert run_cli(["report", str(sweep_dir), "--html"]) == 2
    assert "a point without its row" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_cli(["report", str(empty), "--html"]) == 2
    assert "no records.jsonl in" in capsys.readouterr().err


def test_the_page_at_the_end_of_a_sweep(sweep_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    written, error = write_page_at_end("sweep", sweep_dir, capacity=False)
    assert written == sweep_dir / "sweep.html" and written.is_file() and error is None
    written.unlink()
    written.mkdir()  # a directory in the way: an output error for the caller to report
    written, error = write_page_at_end("sweep", sweep_dir, capacity=False)
    assert written is None and isinstance(error, OSError)
    (sweep_dir / "sweep.json").write_text("[]")  # unreadable results: a warning, the results stand
    assert write_page_at_end("sweep", sweep_dir, capacity=False) == (None, None)
    assert "goodput sweep: warning: sweep.html not written:" in capsys.readouterr().err
