"""Gate behaviours found in review: an aborted run always fails, the baseline is re-judged with the
candidate's SLOs, CI output folders are created, and compare refuses a filter it would ignore."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from loadgen.cli import run_cli
from loadgen.run.gate import GatePlan, finish_run_gate
from loadgen.run.outputs import RECORDS_FILE, RUN_FILE, write_outputs
from metrics.gate.evaluate import Verdict
from metrics.gate.thresholds import parse_threshold
from metrics.records.record import RequestRecord

MS = 1_000_000


def make_run(out: Path, *, ttft_ms: int = 40, n: int = 12, slo: list[str] | None = None) -> Path:
    """A finished run directory from hand-made records: every request ok, TTFT `ttft_ms`."""
    out.mkdir(parents=True)
    records = [RequestRecord(id=i, intended_ns=i * 100 * MS, sent_ns=i * 100 * MS,
                             chunk_ns=[i * 100 * MS + ttft_ms * MS, i * 100 * MS + (ttft_ms + 10) * MS],
                             chunk_tokens=[1, 1], token_source="usage_delta", output_tokens=2,
                             output_tokens_estimated=False, prompt_tokens=20, prompt_tokens_estimated=False,
                             closed_ns=i * 100 * MS + (ttft_ms + 11) * MS) for i in range(n)]
    (out / RECORDS_FILE).write_bytes(b"".join(r.to_json() for r in records))
    run = {"target": "t", "model": "m", "complete": True, "settings": {"slo": slo or ["ttft=1s"]}}
    (out / RUN_FILE).write_text(json.dumps(run))
    write_outputs(out, run)
    return out


def test_an_aborted_run_fails_even_when_the_whole_run_passes(tmp_path: Path) -> None:
    out = make_run(tmp_path / "a")
    threshold = parse_threshold("errors:rate < 15%")
    plan = GatePlan(thresholds=[threshold], abort_thresholds=[threshold],
                    abort_verdicts=[Verdict(threshold, passed=False, value=1.0, limit=0.15)], aborted_at_s=0.5)
    summary = json.loads((out / "summary.json").read_text())
    assert finish_run_gate(plan, out, summary) == 99  # the whole run has 0 % errors, yet it was stopped


def test_baseline_is_rejudged_with_the_candidates_slo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = make_run(tmp_path / "run", ttft_ms=40)  # recorded with ttft=1s: every request good
    code = run_cli(["gate", str(run), "--baseline", str(run), "--slo", "ttft=1ms",
                    "--threshold", "goodput:attainment >= baseline - 0.02"])
    out = capsys.readouterr().out
    assert code == 0, out  # both judged with ttft=1ms: 0 good on each side, like with like


def test_ci_output_folders_are_created(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run")
    junit, md = tmp_path / "reports" / "deep" / "gate.xml", tmp_path / "summary" / "gate.md"
    code = run_cli(["gate", str(run), "--threshold", "ttft:p(99) < 1s", "--junit", str(junit), "--markdown", str(md)])
    assert code == 0
    assert ET.parse(junit).getroot().iter("testcase") and md.read_text().strip()


def test_compare_refuses_a_filter_it_would_replace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = make_run(tmp_path / "a"), make_run(tmp_path / "b")
    assert run_cli(["compare", str(a), str(b), "--stat", "ttft{cache:none}:p(50)"]) == 2
    assert "takes no {filter}" in capsys.readouterr().err


def test_the_run_gate_summary_is_on_stdout_when_it_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`goodput run` with thresholds: the abort reason, the verdicts and the count all on stdout, as when it
    passes — a CI log of stdout alone must still say why the job failed."""
    out = make_run(tmp_path / "a", ttft_ms=40)
    summary = json.loads((out / "summary.json").read_text())
    threshold = parse_threshold("ttft:p(50) < 10ms")
    plan = GatePlan(thresholds=[threshold], abort_thresholds=[threshold],
                    abort_verdicts=[Verdict(threshold, passed=False, value=0.04, limit=0.01)], aborted_at_s=0.5)
    assert finish_run_gate(plan, out, summary) == 99
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out.splitlines() == [
        "run aborted: threshold failed at 0.5 s: FAIL ttft:p(50) < 10ms  measured 40 ms, limit 10 ms",
        "FAIL ttft:p(50) < 10ms  measured 40 ms, limit 10 ms",
        "thresholds: 1 of 1 failed",
    ]


def _bad_paths(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "afile").write_text("x")
    (tmp_path / "adir").mkdir(exist_ok=True)
    return {"proc": Path("/proc/goodput-x/gate.xml"), "directory": tmp_path / "adir",
            "under-a-file": tmp_path / "afile" / "gate.xml"}


@pytest.mark.parametrize("flag", ["--junit", "--markdown"])
@pytest.mark.parametrize("where", ["proc", "directory", "under-a-file"])
def test_gate_outputs_are_checked_with_one_line(flag: str, where: str, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    run = make_run(tmp_path / "run")
    bad = _bad_paths(tmp_path)[where]
    capsys.readouterr()
    assert run_cli(["gate", str(run), "--threshold", "ttft:p(99) < 1s", flag, str(bad)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and f"{flag} {bad}" in lines[0] and "Traceback" not in captured.err, captured.err
    assert captured.out == ""  # refused before judging anything


@pytest.mark.parametrize("where", ["proc", "directory", "under-a-file"])
def test_run_checks_its_gate_outputs_before_sending(where: str, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    bad = _bad_paths(tmp_path)[where]
    out = tmp_path / "run"
    code = run_cli(["run", "--url", "http://127.0.0.1:9", "--requests", "2", "--quiet", "--output", str(out),
                    "--threshold", "ttft:p(99) < 1s", "--junit", str(bad)])
    assert code == 2  # a usage error before the model probe (which would exit 1) and before the directory
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and f"--junit {bad}" in lines[0], lines
    assert not out.exists()


def test_an_output_that_fails_at_the_end_is_named_by_its_path(tmp_path: Path) -> None:
    from loadgen.run.output_files import failed_names

    out = tmp_path / "run"
    errors = [OSError(28, "No space left on device", str(out / "summary.json")),
              OSError(13, "Permission denied", str(tmp_path / "ci" / "gate.xml")), OSError("no name")]
    assert failed_names(errors, out) == f"summary.json, {tmp_path / 'ci' / 'gate.xml'}, an unnamed file"


@pytest.mark.parametrize("flag", ["--output", "--html"])
@pytest.mark.parametrize("where", ["proc", "directory", "under-a-file"])
def test_compare_checks_where_it_writes_before_comparing(flag: str, where: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    run = make_run(tmp_path / "run")
    bad = _bad_paths(tmp_path)[where]
    capsys.readouterr()
    assert run_cli(["compare", str(run), str(run), flag, str(bad)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and f"{flag} {bad}" in lines[0], captured.err
    assert captured.out == ""  # refused before the table
