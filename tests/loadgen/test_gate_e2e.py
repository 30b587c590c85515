"""The deploy gate end to end against the reference server: a baseline, a candidate with an injected
first-token delay that `gate` and `compare` flag, and abort-on-fail stopping a run against a server that
fails half its requests.

The server runs its sim engine (the same scheduler and API, steps paced by the roofline: a quarter of the
torch engine's start-up). The injected delay (250 ms) is many times the run-to-run noise of a busy 2-core
machine (a TTFT p50 of ~14 ms moving by ~7 ms between identical runs on the torch engine, less on the sim
engine), so these verdicts do not depend on the machine. That
noise *not* being flagged is a statistical property of `compare`, tested on synthetic runs with known
distributions (tests/metrics/test_compare_noise.py, tests/loadgen/test_gate_cli.py), not here: two real
runs on a shared machine differ by whatever the machine did meanwhile."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from loadgen.cli import run_cli
from loadgen.run.embedded import embedded_server

pytestmark = pytest.mark.slow
GOODPUT = str(Path(sys.executable).with_name("goodput"))
LOAD = ["--prompt-tokens", "48", "--output-tokens", "16", "--rate", "8", "--quiet"]
# The first second of each run (connections opening, a cold server) is not part of what compare judges.
WARMUP = ["--warmup", "1s"]
FIRST_TOKEN_DELAY_S = 0.25


def _run(url: str, out: Path, *, seed: int, requests: int, extra: list[str] | None = None) -> subprocess.Popen[str]:
    cmd = [GOODPUT, "run", "--url", url, "--requests", str(requests), "--seed", str(seed), *LOAD,
           "--output", str(out), *(extra or [])]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait(proc: subprocess.Popen[str]) -> tuple[int, str]:
    out, err = proc.communicate(timeout=240)
    return proc.returncode, out + err


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    root = tmp_path_factory.mktemp("gate_e2e")
    dirs = {name: root / name for name in ("base", "cand")}
    with embedded_server(["--engine=sim"]) as url:
        code, text = _wait(_run(url, dirs["base"], seed=1, requests=38, extra=WARMUP))
        assert code == 0, text
    with embedded_server(["--engine=sim", f"--fault-first-token-delay-s={FIRST_TOKEN_DELAY_S}"]) as slow_url:
        code, text = _wait(_run(slow_url, dirs["cand"], seed=1, requests=28, extra=WARMUP))
        assert code == 0, text
    yield dirs


def test_gate_flags_the_delayed_candidate(runs: dict[str, Path], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    conditions = ["--threshold", "ttft:p(50) < baseline + 100ms", "--threshold", "goodput:attainment >= baseline - 0.02",
                  "--threshold", "errors:rate == 0"]
    junit = tmp_path / "cand.xml"
    code = run_cli(["gate", str(runs["cand"]), "--baseline", str(runs["base"]), *conditions, "--junit", str(junit)])
    out = capsys.readouterr().out
    assert code == 99
    assert "FAIL ttft:p(50) < baseline + 100ms  measured" in out and "PASS errors:rate == 0" in out
    assert "thresholds: 1 of 3 failed" in out
    cases = ET.parse(junit).getroot().findall("./testsuite/testcase")
    assert [c.find("failure") is not None for c in cases] == [True, False, False]

    assert run_cli(["gate", str(runs["base"]), "--baseline", str(runs["base"]), *conditions]) == 0


def test_compare_flags_the_regression(runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    md = tmp_path / "compare.md"
    code = run_cli(["compare", str(runs["base"]), str(runs["cand"]), "--output", str(md), "--fail-on-regression"])
    assert code == 99
    text = md.read_text()
    ttft_row = next(line for line in text.splitlines() if line.startswith("| all | `ttft:p(50)`"))
    assert "regression" in ttft_row
    capsys.readouterr()


def test_abort_on_fail_stops_early_with_complete_outputs(tmp_path: Path) -> None:
    out = tmp_path / "abort"
    junit = tmp_path / "abort.xml"
    planned = 400  # 50 s at 8 req/s: the abort must come long before
    proc = subprocess.run(
        [GOODPUT, "run", "--requests", str(planned), *LOAD, "--output", str(out),
         "--server-arg=--engine=sim", "--server-arg=--fault-500=0.5", "--server-arg=--fault-seed=3",
         "--threshold", "errors:rate < 0.1", "--threshold", "ttft:p(99) < 10s",
         "--abort-on-fail", "--abort-delay", "1s", "--junit", str(junit)],
        capture_output=True, text=True, timeout=240,
    )
    assert proc.returncode == 99, proc.stdout + proc.stderr
    assert "run aborted: threshold failed" in proc.stdout and "thresholds: " in proc.stdout
    for name in ("records.jsonl", "summary.json", "summary.csv", "records.parquet", "run.json"):
        assert (out / name).is_file(), name
    summary = json.loads((out / "summary.json").read_text())
    run, req = summary["run"], summary["requests"]
    assert run["aborted"] is True and run["complete"] is False and run["interrupted"] is False
    assert "errors:rate < 0.1" in run["abort_reason"]
    assert req["records"] < planned / 2
    assert req["records"] == req["succeeded"] + req["failed"] + req["cancelled"]
    assert len((out / "records.jsonl").read_bytes().splitlines()) == req["records"]
    assert json.loads((out / "run.json").read_text())["aborted"] is True
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert cases["errors:rate < 0.1"].find("failure") is not None
