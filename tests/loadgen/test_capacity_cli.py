"""`goodput capacity` end to end on the embedded sim engine, its usage errors (nothing sent), its gate,
and Ctrl-C (capacity.json keeps what was measured)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from loadgen.cli import run_cli
from metrics.capacity_search.search import round_rate
from tests.servers.scripted import closed_port

GOODPUT = str(Path(sys.executable).with_name("goodput"))
# The sim engine on a slow GPU preset: steps of tens of milliseconds, so a capacity of a few tens of
# requests/s that a busy test machine can offer without falling behind.
SIM = ["--server-arg=--engine=sim", "--server-arg=--sim-gpu=L4", "--prompt-tokens", "32", "--output-tokens", "4",
       "--server-metrics", "none", "--lag-threshold", "200ms", "--slo", "ttft=1s"]
LINE = re.compile(r"^capacity (at least )?[\d.]+ req/s at 90 % attainment \(95 % conf\.; .*; (\d+) points, ([\d,]+) requests\)$",
                  re.MULTILINE)


@pytest.mark.parametrize(("args", "needle"), [
    ([], "needs an SLO"),
    (["--slo", "ttft=1s", "--threshold", "ttft:p(99) < 1s"], "is about a run"),
    (["--slo", "ttft=1s", "--threshold", "capacity:rate >= baseline"], "pass --baseline"),
    (["--slo", "ttft=1s", "--threshold", "capacity:rate >= baseline", "--baseline", "/nonexistent"],
     "not a capacity search"),
    (["--slo", "ttft=1s", "--threshold", "capacity:rate >= 1", "--abort-on-fail"], "judged once"),
    (["--slo", "ttft=1s", "--attainment", "1"], "--attainment must be in (0, 1)"),
    (["--slo", "ttft=1s", "--attainment", "lots"], "--attainment expects"),
    (["--slo", "ttft=1s", "--min-rate", "5", "--max-rate", "2"], "must be below --max-rate"),
    (["--slo", "ttft=1s", "--interval", "normal"], "--interval"),
    (["--slo", "ttft=1s", "--tolerance", "0"], "--tolerance"),
    (["--slo", "ttft=1s", "--max-points", "0"], "--max-points"),
    (["--slo", "ttft=1s", "--point-duration", "soon"], "--point-duration"),
])
def test_usage_errors_send_nothing(args: list[str], needle: str, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "never"
    assert run_cli(["capacity", "--url", "http://127.0.0.1:9", "--model", "m", "--output", str(out), *args]) == 2
    assert needle in capsys.readouterr().err
    assert not out.exists()


def test_capacity_with_a_ceiling_and_a_gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, junit = tmp_path / "cap", tmp_path / "cap.xml"
    code = run_cli(["capacity", "--concurrency", "8", "--point-duration", "1.5s", "--max-points", "4",
                    "--output", str(out), *SIM, "--threshold", "capacity:points <= 4",
                    "--threshold", "capacity:rate >= 0 | nodata=pass", "--junit", str(junit)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    doc = json.loads((out / "capacity.json").read_text())
    cap, ceiling = doc["capacity"], doc["ceiling"]
    assert doc["complete"] is True and doc["kind"] == "capacity"
    assert ceiling["concurrency"] == 8 and ceiling["label"] == "00-ceiling-c8"
    # The ceiling is where the search starts, not a limit: rates that pass are followed upward.
    assert cap["max_rate"] is None
    assert "requests sent so far" in captured.err and "(point 2 of 4, " in captured.err
    assert cap["points"] == len(doc["points"]) <= 4
    assert cap["status"] in ("bracketed", "at_least", "max_points", "client_limited")
    sent = 0
    for row in doc["points"]:
        point_dir = out / "points" / row["label"]
        summary = json.loads((point_dir / "summary.json").read_text())
        sent += summary["requests"]["sent"]
        assert row["measured"] == summary["goodput"]["measured"] and row["good"] == summary["goodput"]["good"]
    assert cap["requests"] == sent
    probes = [r for r in doc["points"] if r["label"] != "00-ceiling-c8"]
    # No rate a 1.5 s point cannot reach a verdict at: 12 requests (35 for a pass, over three runs) in
    # its 1.35 s window.
    assert cap["floor_rate"] == round_rate(12 / 1.35)
    assert probes and all(r["rate"] >= cap["floor_rate"] for r in probes)
    assert probes[0]["rate"] == max(round_rate(0.75 * ceiling["requests_per_s"]), cap["floor_rate"])
    # Each probe offered exactly its rate over its window (a plain Poisson draw of ~12 requests does not).
    assert all(r["offered_rps"] == pytest.approx(r["rate"], rel=1e-6) for r in probes)
    assert cap["rate_basis"].startswith("realised") and cap["client_rule"].startswith("absolute")
    if cap["rate"] is not None:  # the claim is a probed rate whose pooled interval clears the target
        at = next(e for e in doc["rates"] if e["rate"] == cap["rate"])
        assert at["verdict"] == "pass" and at["interval"][0] >= 0.9 and cap["interval"] == at["interval"]
    match = LINE.search(captured.out)
    assert match is not None, captured.out
    assert int(match.group(2)) == cap["points"] and int(match.group(3).replace(",", "")) == cap["requests"]
    assert "thresholds: all 2 passed" in captured.out
    assert len(ET.parse(junit).getroot().findall(".//testcase")) == 2


def test_capacity_threshold_failure_exits_99(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cap"
    code = run_cli(["capacity", "--min-rate", "4", "--max-rate", "12", "--point-duration", "1.5s",
                    "--max-points", "2", "--output", str(out), *SIM, "--threshold", "capacity:rate >= 1000"])
    assert code == 99
    assert "FAIL capacity:rate >= 1000" in capsys.readouterr().out
    assert json.loads((out / "capacity.json").read_text())["capacity"]["points"] == 2


def _records_after_first_point(out: Path) -> bool:
    """A record line in a point other than the first one capacity.json shows done."""
    try:
        first = json.loads((out / "capacity.json").read_text())["points"][0]["label"]
    except (OSError, ValueError, KeyError, IndexError):
        return False
    return any(path.parent.name != first and path.read_bytes().count(b"\n") >= 1
               for path in (out / "points").glob("*/records.jsonl"))


def test_interrupt_keeps_what_was_measured(tmp_path: Path) -> None:
    out = tmp_path / "cap"
    proc = subprocess.Popen([GOODPUT, "capacity", "--min-rate", "2", "--max-rate", "20", "--point-duration", "2s",
                             "--output", str(out), *SIM], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        # SIGINT once a second probe has a record (an observable event, not a fixed sleep after the first
        # probe's row, which a loaded host might spend before the second probe even starts).
        deadline = time.monotonic() + 90
        while not _records_after_first_point(out):
            assert proc.poll() is None and time.monotonic() < deadline, "no second probe started"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    doc = json.loads((out / "capacity.json").read_text())
    assert doc["complete"] is False and doc["interrupted"] is True
    assert doc["capacity"]["status"] == "interrupted"
    assert doc["points"][0]["status"] == "done"
    assert "interrupted; capacity.json holds what was measured" in stderr


def test_a_server_that_refuses_connections_stops_the_search(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cap"
    with closed_port() as port:  # bound and not listening: every connection is refused
        code = run_cli(["capacity", "--url", f"http://127.0.0.1:{port}", "--model", "m", "--slo", "ttft=1s",
                        "--max-rate", "8", "--point-requests", "3", "--output", str(out), "--server-metrics", "none",
                        "--quiet"])
    assert code == 1  # not "fails at every rate": nothing was learnt about attainment
    err = capsys.readouterr().err
    assert "01-rate-4 ended with a runtime error" in err
    doc = json.loads((out / "capacity.json").read_text())
    assert doc["capacity"]["rate"] is None and doc["rates"] == [] and len(doc["points"]) == 1
    assert (doc["complete"], doc["interrupted"], doc["capacity"]["status"]) == (False, False, "error")


def test_a_heavy_workload_without_a_range_is_not_sunk_by_its_ceiling(tmp_path: Path) -> None:
    # Long prompts on a slow simulated GPU: the closed loop's first wave of 48 queues for seconds, and the
    # requests its window measures are the few sent behind it. That window's rate must not become the
    # search's start: every probe lies at or above the floor of a 3 s point, and none is a runtime error.
    out = tmp_path / "cap"
    code = run_cli(["capacity", "--concurrency", "48", "--point-duration", "3s", "--max-points", "3",
                    "--output", str(out), "--no-html", "--quiet", "--server-arg=--engine=sim",
                    "--server-arg=--sim-gpu=L4", "--prompt-tokens", "1024", "--output-tokens", "8",
                    "--server-metrics", "none", "--lag-threshold", "500ms", "--slo", "ttft=2s"])
    assert code == 0
    doc = json.loads((out / "capacity.json").read_text())
    cap, ceiling = doc["capacity"], doc["ceiling"]
    window_rate = doc["points"][0]["requests_per_s"]
    assert ceiling["requests_per_s"] > 2 * window_rate  # what the server completed, not the queued window
    probes = doc["points"][1:]
    assert probes and all(r["rate"] >= cap["floor_rate"] == round_rate(12 / 2.7) for r in probes)
    assert all(r["measured"] >= 12 for r in probes)
    assert cap["status"] != "error" and doc["complete"] is True
