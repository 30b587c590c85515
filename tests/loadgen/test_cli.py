"""The `goodput` CLI end to end: usage errors (exit 2, one line, nothing sent), a real run against the
embedded reference server, `goodput report` rebuilding it, SIGINT (exit 130) and SIGKILL survival."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from loadgen.cli import run_cli
from loadgen.run.setup import schedule_end_s
from loadgen.spec.sections import LoadSpec
from loadgen.workload.arrivals import Arrival, parse_arrival
from loadgen.workload.schedule import run_schedule

GOODPUT = str(Path(sys.executable).with_name("goodput"))
UNREACHABLE = "http://127.0.0.1:9"  # discard port: nothing listens; a usage error must fire before any connect


@pytest.mark.parametrize(("args", "needle"), [
    (["--rate", "-1"], "--rate must be a positive"),
    (["--arrival", "weibull", "--rate", "1"], "unknown arrival process"),
    (["--prompt-tokens", "zipf:1:2"], "unknown length distribution"),
    (["--dataset", "/nonexistent/data.jsonl"], "cannot read dataset"),
    (["--slo", "ttft=fast"], "ttft"),
    (["--extra-body", "{nope"], "--extra-body is not valid JSON"),
    (["--duration", "soon"], "--duration"),
    (["--requests", "0"], "--requests must be >= 1"),
    (["--tag", "novalue"], "--tag expects KEY=VALUE"),
    (["--no-such-option"], "No such option"),
    (["--arrival", "ramp", "--rate", "1", "--rate-end", "5"], "--arrival ramp needs --duration"),
    (["--duration", "0"], "--duration must be greater than 0"),
    (["--arrival", "concurrency", "--concurrency", "2", "--duration", "0"], "--duration must be greater than 0"),
    (["--timeout-total", "0"], "--timeout-total must be greater than 0"),
    (["--stall-threshold", "0"], "stall"),
])
def test_usage_errors_exit_2_with_one_line(args: list[str], needle: str, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code = run_cli(["run", "--url", UNREACHABLE, "--model", "m", "--output", str(out), *args])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and needle in err and err.startswith("goodput")
    assert not out.exists()  # nothing was started, nothing written


@pytest.mark.parametrize("url", ["ftp://127.0.0.1:9", "notaurl"])
def test_bad_url_is_a_usage_error(url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["run", "--url", url, "--model", "m", "--output", str(tmp_path / "o")]) == 2
    assert "base URL must look like" in capsys.readouterr().err


def test_output_must_not_be_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "f").write_text("x")
    assert run_cli(["run", "--url", UNREACHABLE, "--model", "m", "--output", str(tmp_path / "f")]) == 2
    assert "is not a directory" in capsys.readouterr().err


@pytest.mark.parametrize(("arrival", "count", "duration", "end"), [
    (parse_arrival("constant", rate=10.0, burstiness=1.0, rate_end=None, concurrency=None), 100, 60.0, 9.9),
    (parse_arrival("constant", rate=10.0, burstiness=1.0, rate_end=None, concurrency=None), 1000, 5.0, 5.0),
    (parse_arrival("poisson", rate=10.0, burstiness=1.0, rate_end=None, concurrency=None), None, 5.0, 5.0),
    (parse_arrival("concurrency", rate=None, burstiness=1.0, rate_end=None, concurrency=2), None, 5.0, 5.0),
    (parse_arrival("concurrency", rate=None, burstiness=1.0, rate_end=None, concurrency=2), 10, 5.0, None),
])
def test_cooldown_counts_back_from_where_dispatch_really_ends(arrival: Arrival, count: int | None,
                                                               duration: float, end: float | None) -> None:
    """The cool-down is measured back from the duration only when the duration is what ends the run."""
    load = LoadSpec(arrival=arrival, duration_s=duration, requests=count, seed=0)
    assert schedule_end_s(load, run_schedule(load)) == end


def test_unreachable_server_is_a_runtime_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = run_cli(["run", "--url", UNREACHABLE, "--output", str(tmp_path / "o"), "--requests", "1"])
    err = capsys.readouterr().err
    assert code == 1 and "connection refused" in err and "pass --model" not in err  # --model cannot help


def test_report_needs_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["report", str(tmp_path)]) == 2
    assert "no records.jsonl" in capsys.readouterr().err


def _count_lines(path: Path) -> int:
    return len(path.read_bytes().splitlines()) if path.exists() else 0


def test_embedded_run_then_report_rebuilds_the_same_summary(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = subprocess.run([GOODPUT, "run", "--requests", "6", "--rate", "20", "--prompt-tokens", "40",
                           "--output-tokens", "12", "--slo", "ttft=5s", "--tag", "scenario=smoke", "--quiet",
                           "--api-key", "sekrit-token", "--server-arg=--api-key=sekrit-token",
                           "--output", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    for name in ("records.jsonl", "summary.json", "summary.csv", "records.parquet", "run.json"):
        assert (out / name).is_file(), name
        assert b"sekrit-token" not in (out / name).read_bytes()
    assert "sekrit-token" not in proc.stdout + proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["requests"]["sent"] == summary["requests"]["succeeded"] == 6
    assert summary["run"]["complete"] is True
    assert summary["latency"]["ttft_s"]["count"] == 6
    assert summary["tokens"]["output_tokens"] == 6 * 12  # ignore_eos is on for the embedded server
    assert summary["server"]["ttft_s"]["count"] == 6  # the reference server's timing extension was read
    assert any(b["dimension"] == "tag:scenario" and b["label"] == "smoke" for b in summary["buckets"])
    assert "latency p50/p99 in ms:" in proc.stdout

    code = run_cli(["report", str(out), "--quiet"])
    rebuilt = json.loads((out / "summary.json").read_text())
    assert code == 0
    assert rebuilt["latency"] == summary["latency"] and rebuilt["buckets"] == summary["buckets"]
    assert rebuilt["goodput"] == summary["goodput"]


def _start_long_run(out: Path) -> subprocess.Popen[str]:
    # The sim engine: these tests are about signals and files, not the model, and it starts and serves its
    # first records in a fraction of the torch engine's time on a loaded host.
    return subprocess.Popen([GOODPUT, "run", "--server-arg=--engine=sim", "--duration", "120s", "--rate", "4",
                             "--prompt-tokens", "20", "--output-tokens", "400", "--quiet", "--grace", "1s",
                             "--output", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_records(proc: subprocess.Popen[str], path: Path, n: int) -> None:
    deadline = time.monotonic() + 180
    while _count_lines(path) < n:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "run produced no records"
        time.sleep(0.2)


def test_sigint_writes_incomplete_outputs_and_exits_130(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = _start_long_run(out)
    try:
        _wait_for_records(proc, out / "records.jsonl", 2)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["run"]["complete"] is False
    req = summary["requests"]
    assert req["records"] == req["succeeded"] + req["failed"] + req["cancelled"] == _count_lines(out / "records.jsonl")
    assert "INCOMPLETE" in stdout


def test_sigkill_keeps_records_and_report_rebuilds(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = _start_long_run(out)
    try:
        _wait_for_records(proc, out / "records.jsonl", 3)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    n = _count_lines(out / "records.jsonl")
    assert n >= 3 and not (out / "summary.json").exists() and not (out / "metrics.prom").exists()
    assert run_cli(["report", str(out), "--quiet"]) == 0
    assert (out / "metrics.prom").is_file() and (out / "records.parquet").is_file()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["requests"]["records"] == n and summary["run"]["complete"] is False
    # Not "interrupted": all the files can tell is that the records were never closed.
    assert summary["run"]["ended_by"] == "killed or still running: records.jsonl was never closed"
    from exporters.console import format_summary

    assert format_summary(summary).splitlines()[0].endswith(
        "[INCOMPLETE: killed or still running: records.jsonl was never closed]")


# Runs the installed console script, but first makes the import of MODULE announce itself (the marker
# file) and then stall: the signal then lands at a known moment of start-up, not after a guessed sleep.
_STALL_IMPORT = """
import pathlib, runpy, sys, time
module, marker, script = sys.argv[1:4]
class Stall:
    def find_spec(self, name, path=None, target=None):
        if name == module:
            sys.meta_path.remove(self)
            pathlib.Path(marker).write_text(name)
            time.sleep(120)
        return None
sys.meta_path.insert(0, Stall())
sys.argv = [script, *sys.argv[4:]]
runpy.run_path(script, run_name="__main__")
"""


def _as_from_a_terminal() -> None:
    """In the child: SIGINT at its default, as a command typed in a terminal has it. (A shell without job
    control starts background jobs with SIGINT ignored; goodput handles SIGINT all the same, which
    tests/loadgen/test_startup.py checks.)"""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_for(ready: Callable[[], bool], proc: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + 120
    while not ready():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"never reached: {what}"
        time.sleep(0.02)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
@pytest.mark.parametrize("stage", ["import typer", "import httpx", "import numpy", "model probe"])
def test_a_signal_at_any_moment_of_start_up_exits_130_with_nothing_sent(stage: str, sig: signal.Signals,
                                                                        tmp_path: Path) -> None:
    """The target accepts connections and never answers. The signal arrives either while the CLI's
    modules are still being imported (the stalled import), or while the model probe hangs (the server
    has accepted its connection); each time: exit 130, one line, no traceback, no output directory."""
    import socket

    out, marker = tmp_path / "o", tmp_path / "importing"
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        silent.settimeout(0.05)
        args = ["run", "--url", f"http://127.0.0.1:{silent.getsockname()[1]}", "--requests", "3", "--quiet",
                "--output", str(out)]
        if stage == "model probe":
            cmd = [GOODPUT, *args]
        else:
            cmd = [sys.executable, "-c", _STALL_IMPORT, stage.removeprefix("import "), str(marker), GOODPUT, *args]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=_as_from_a_terminal)
        accepted: list[socket.socket] = []

        def probe_connected() -> bool:
            try:
                accepted.append(silent.accept()[0])
            except TimeoutError:
                return False
            return True

        try:
            _wait_for(probe_connected if stage == "model probe" else marker.exists, proc, stage)
            proc.send_signal(sig)
            _, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
            for conn in accepted:
                conn.close()
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1] in ("goodput: interrupted",
                                               "goodput: interrupted before the first request; nothing was sent")
    assert not out.exists()


def test_credentials_in_the_url_are_never_written(tmp_path: Path) -> None:
    from loadgen.run.embedded import embedded_server

    out = tmp_path / "run"
    with embedded_server(["--engine=sim"]) as url:
        secret_url = url.replace("http://", "http://scott:tiger-pass@")
        proc = subprocess.run([GOODPUT, "run", "--url", secret_url, "--requests", "2", "--rate", "20",
                               "--output-tokens", "4", "--quiet", "--server-metrics-interval", "0.2s",
                               "--output", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "tiger-pass" not in proc.stdout + proc.stderr
    for path in out.iterdir():
        assert b"tiger-pass" not in path.read_bytes(), path.name
    assert json.loads((out / "summary.json").read_text())["run"]["target"] == url


def test_metrics_prom_counts_the_same_window_as_the_summary(tmp_path: Path) -> None:
    """A cool-down on a count-bound run: the live exporters and summary.json exclude the same requests."""
    from prometheus_client.parser import text_string_to_metric_families

    out = tmp_path / "run"
    proc = subprocess.run([GOODPUT, "run", "--server-arg=--engine=sim", "--requests", "20", "--rate", "20",
                           "--cooldown", "0.3s", "--output-tokens", "8", "--quiet", "--server-metrics", "none",
                           "--output", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    families = {f.name: f for f in text_string_to_metric_families((out / "metrics.prom").read_text())}
    evaluated = sum(s.value for s in families["goodput_evaluated_requests"].samples if s.name.endswith("_total"))
    assert 0 < summary["requests"]["in_window"] < 20
    assert evaluated == summary["requests"]["in_window"] == summary["latency"]["ttft_s"]["count"]
