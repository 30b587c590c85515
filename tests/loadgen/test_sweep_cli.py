"""`goodput sweep` end to end on the embedded reference server's sim engine (started once per sweep), and
its options: every `goodput run` option, the sweep's own panel, usage errors before anything is sent,
interruption with Ctrl-C and `--resume`."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import typer

from loadgen.cli import run_cli
from loadgen.cli.app import app
from loadgen.sweep.sweep import auto_rates

GOODPUT = str(Path(sys.executable).with_name("goodput"))
# A fast, steady target: the sim engine (roofline clock, no model) with short requests.
SIM = ["--server-arg=--engine=sim", "--prompt-tokens", "32", "--output-tokens", "4", "--server-metrics", "none",
       "--lag-threshold", "200ms", "--slo", "ttft=1s"]


def _params(command: str) -> dict[str, object]:
    click_app = typer.main.get_command(app)
    return {p.name: p for p in click_app.commands[command].params}  # type: ignore[attr-defined]


@pytest.mark.parametrize("command", ["sweep", "capacity"])
def test_every_run_option_is_accepted(command: str) -> None:
    run, own = _params("run"), _params(command)
    assert set(run) - {"print_config"} <= set(own)
    for name in ("rate", "slo", "config", "server_arg", "threshold"):  # same flags, help, panel
        assert own[name].opts == run[name].opts  # type: ignore[attr-defined]
        assert own[name].help == run[name].help  # type: ignore[attr-defined]
    panel = "Sweep" if command == "sweep" else "Capacity search"
    own_panel = [p for p in own.values() if getattr(p, "rich_help_panel", None) == panel]
    assert {p.name for p in own_panel} >= ({"rates", "resume"} if command == "sweep" else {"attainment", "max_points"})


def test_sweep_of_rates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sweep"
    code = run_cli(["sweep", "--rates", "4,8", "--point-duration", "1.5s", "--output", str(out), *SIM])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    doc = json.loads((out / "sweep.json").read_text())
    assert doc["complete"] is True and doc["missing"] == []
    assert doc["server"]["embedded"] is True and doc["server"]["started"] == "once, for every point"
    labels = [p["plan"]["label"] for p in doc["points"]]
    assert labels == ["01-rate-4", "02-rate-8"]
    targets = set()
    for point in doc["points"]:
        run = json.loads((out / "points" / point["plan"]["label"] / "run.json").read_text())
        summary = json.loads((out / "points" / point["plan"]["label"] / "summary.json").read_text())
        assert run["complete"] is True
        assert run["spec"]["load"]["warmup_s"] == pytest.approx(0.15)  # 10 % of each point
        assert run["spec"]["load"]["arrival"]["rate"] == point["plan"]["value"]
        targets.add(run["target"])
        row = point["row"]
        assert row["status"] == "done" and row["measured"] == summary["requests"]["in_window"]
        assert row["attainment"] == summary["goodput"]["attainment"]
        assert row["ttft_p99_s"] == summary["latency"]["ttft_s"]["p99"]
    assert len(targets) == 1  # one server for the whole sweep
    with (out / "sweep.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [r["label"] for r in rows] == labels and rows[0]["offered_rps"]
    assert "01-rate-4" in captured.out and "TTFT p50/p99" in captured.out
    assert "point 2/2: 02-rate-8" in captured.err


def test_auto_sweep_spreads_rates_under_the_ceiling(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "auto"
    code = run_cli(["sweep", "--auto", "--points", "3", "--concurrency", "8", "--point-duration", "1s",
                    "--output", str(out), *SIM])
    assert code == 0, capsys.readouterr().err
    doc = json.loads((out / "sweep.json").read_text())
    ceiling = doc["ceiling"]
    assert ceiling["concurrency"] == 8 and ceiling["label"] == "00-ceiling-c8"
    rates = [p["plan"]["value"] for p in doc["points"][1:]]
    assert rates == auto_rates(ceiling["requests_per_s"], 3)
    assert rates[-1] == pytest.approx(ceiling["requests_per_s"] * 1.1, rel=0.01)
    assert doc["points"][0]["plan"]["kind"] == "concurrency" and doc["complete"]


def test_thresholds_apply_to_each_point(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "gated"
    code = run_cli(["sweep", "--rates", "5", "--point-requests", "8", "--output", str(out), *SIM,
                    "--threshold", "ttft:p(99) < 1us", "--junit", str(tmp_path / "gate.xml")])
    assert code == 99
    assert "FAIL ttft:p(99) < 1us" in capsys.readouterr().out
    assert (out / "points" / "01-rate-5" / "gate.xml").is_file()  # one file per point, in its directory
    assert not (tmp_path / "gate.xml").exists()


@pytest.mark.parametrize(("args", "needle"), [
    ([], "exactly one of --rates, --concurrencies and --auto"),
    (["--rates", "1,2", "--auto"], "got --rates and --auto"),
    (["--rates", "1,x"], "comma-separated numbers"),
    (["--rates", "1,1"], "twice"),
    (["--concurrencies", "2.5"], "whole number"),
    (["--rates", "1", "--point-duration", "0s"], "--point-duration"),
    (["--rates", "1", "--point-requests", "0"], "--point-requests"),
    (["--auto", "--points", "1"], "--points must be >= 2"),
    (["--rates", "1", "--threshold", "capacity:rate >= 1"], "result of a capacity search"),
    (["--rates", "1", "--dataset", "/nonexistent.jsonl"], "nonexistent"),
    (["--rates", "1", "--rate-end", "-1", "--arrival", "ramp", "--duration", "1s"], "--rate-end"),
])
def test_usage_errors_send_nothing(args: list[str], needle: str, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "never"
    assert run_cli(["sweep", "--url", "http://127.0.0.1:9", "--model", "m", "--output", str(out), *args]) == 2
    assert needle in capsys.readouterr().err
    assert not out.exists()


def test_an_existing_sweep_is_not_overwritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "taken"
    out.mkdir()
    (out / "sweep.json").write_text("{}")
    assert run_cli(["sweep", "--url", "http://127.0.0.1:9", "--model", "m", "--rates", "1", "--output", str(out)]) == 2
    assert "already holds a sweep" in capsys.readouterr().err
    assert (out / "sweep.json").read_text() == "{}"


def test_config_file_applies_to_every_point(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "load.yaml"
    config.write_text("server_args: ['--engine=sim']\nprompt_tokens: 32\noutput_tokens: 3\nserver_metrics: none\n"
                      "lag_threshold: 200ms\nwarmup: 0.2s\nslo: {ttft: 1s}\ntags: {scenario: sweep}\n")
    out = tmp_path / "cfg"
    assert run_cli(["sweep", "--config", str(config), "--rates", "6", "--point-requests", "6",
                    "--output", str(out)]) == 0, capsys.readouterr().err
    run = json.loads((out / "points" / "01-rate-6" / "run.json").read_text())
    assert run["spec"]["workload"]["output_tokens"]["a"] == 3.0
    assert run["spec"]["workload"]["tags"] == [["scenario", "sweep"]]
    assert run["spec"]["load"]["warmup_s"] == 0.2  # --warmup given: used as is, not 10 %


def _wait_for(predicate: object, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError("timed out waiting")


def _done_points(out: Path) -> list[str]:
    try:
        doc = json.loads((out / "sweep.json").read_text())
    except (OSError, ValueError):
        return []
    return [p["plan"]["label"] for p in doc["points"] if p["row"]["status"] == "done"]


def test_interrupt_keeps_finished_points_and_resume_finishes(tmp_path: Path) -> None:
    out = tmp_path / "interrupted"
    proc = subprocess.Popen([GOODPUT, "sweep", "--rates", "4,5,6", "--point-duration", "2s", "--output", str(out),
                             *SIM], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        _wait_for(lambda: _done_points(out) == ["01-rate-4"], 90)
        # Inside the second point: SIGINT once it has written a record (an observable event, not a fixed
        # sleep that a loaded host might spend before the point starts).
        second = out / "points" / "02-rate-5" / "records.jsonl"
        _wait_for(lambda: second.exists() and second.read_bytes().count(b"\n") >= 1, 90)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    doc = json.loads((out / "sweep.json").read_text())
    assert doc["complete"] is False and doc["interrupted"] is True
    assert doc["missing"] == ["02-rate-5", "03-rate-6"]
    assert "missing: 02-rate-5, 03-rate-6" in stderr and f"goodput sweep --resume {out}" in stderr
    first = (out / "points" / "01-rate-4" / "records.jsonl").read_bytes()

    resumed = subprocess.run([GOODPUT, "sweep", "--resume", str(out)], capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    doc = json.loads((out / "sweep.json").read_text())
    assert doc["complete"] is True and doc["missing"] == []
    assert [p["row"]["status"] for p in doc["points"]] == ["done"] * 3
    assert (out / "points" / "01-rate-4" / "records.jsonl").read_bytes() == first  # finished points are kept
    for label in ("02-rate-5", "03-rate-6"):
        assert json.loads((out / "points" / label / "run.json").read_text())["complete"] is True
    assert "01-rate-4" in resumed.stdout and "03-rate-6" in resumed.stdout


def test_resume_takes_no_other_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "done"
    assert run_cli(["sweep", "--rates", "5", "--point-requests", "4", "--output", str(out), *SIM]) == 0
    capsys.readouterr()
    assert run_cli(["sweep", "--resume", str(out), "--rate", "9", "--rates", "1"]) == 2
    assert "drop --rate, --rates" in capsys.readouterr().err
    assert run_cli(["sweep", "--resume", str(out)]) == 2
    assert "the sweep is complete" in capsys.readouterr().err
    assert run_cli(["sweep", "--resume", str(tmp_path / "nowhere")]) == 2
    assert "cannot read sweep.json" in capsys.readouterr().err


def _tree(root: Path, skip: Path) -> dict[str, str]:
    """Every file, link and directory under `root` but outside `skip`, with a hash of its bytes."""
    import hashlib

    found = {}
    for path in sorted(root.rglob("*")):
        if path == skip or skip in path.parents:
            continue
        if path.is_symlink():
            found[str(path)] = "link:" + os.readlink(path)
        elif path.is_file():
            found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            found[str(path)] = "dir"
    return found


def _pending_again(out: Path, label: str) -> None:
    """sweep.json edited: its second point not run yet, under `label`."""
    doc = json.loads((out / "sweep.json").read_text())
    doc["points"][1]["plan"]["label"] = label
    doc["points"][1]["row"].update(label=label, status="interrupted")
    doc["complete"] = False
    (out / "sweep.json").write_text(json.dumps(doc))


@pytest.fixture(scope="module")
def finished_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("finished") / "sweep"
    assert run_cli(["sweep", "--rates", "5,6", "--point-requests", "3", "--output", str(out), *SIM, "--quiet"]) == 0
    return out


@pytest.mark.parametrize("tamper", ["absolute", "dotdot", "symlink", "slash", "points-symlink"])
def test_resume_never_writes_outside_the_sweep(tamper: str, finished_sweep: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "records.jsonl").write_bytes(b'{"id": 0}\n')
    (victim / "report.html").write_bytes(b"<html>mine</html>\n")
    out = tmp_path / "deep" / "er" / "sweep"
    shutil.copytree(finished_sweep, out)
    if tamper == "absolute":
        _pending_again(out, str(victim))
    elif tamper == "dotdot":
        _pending_again(out, "../../../x")
    elif tamper == "slash":
        _pending_again(out, "02-rate-6/../../../../victim")
    elif tamper == "symlink":  # a valid name whose directory was replaced by a link to another run
        _pending_again(out, "02-rate-6")
        shutil.rmtree(out / "points" / "02-rate-6")
        (out / "points" / "02-rate-6").symlink_to(victim)
    else:  # points/ itself a link to elsewhere
        _pending_again(out, "02-rate-6")
        shutil.rmtree(out / "points" / "02-rate-6")
        (out / "points").rename(tmp_path / "elsewhere")
        (out / "points").symlink_to(tmp_path / "elsewhere")
    before = _tree(tmp_path, skip=out)
    capsys.readouterr()
    assert run_cli(["sweep", "--resume", str(out)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and ("not a point name" in err or "symbolic link" in err), err
    assert _tree(tmp_path, skip=out) == before  # not a byte changed outside the sweep directory
    assert run_cli(["report", str(out), "--quiet"]) == (2 if tamper in ("absolute", "dotdot", "slash") else 0)


def test_overwrite_never_follows_a_linked_point_directory(finished_sweep: Path, tmp_path: Path) -> None:
    import shutil

    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "records.jsonl").write_bytes(b'{"id": 0}\n')
    out = tmp_path / "sweep"
    shutil.copytree(finished_sweep, out)
    (out / "points" / "09-rate-1").symlink_to(victim)
    before = _tree(tmp_path, skip=out)
    code = run_cli(["sweep", "--rates", "5", "--point-requests", "2", "--output", str(out), "--overwrite", *SIM,
                    "--quiet"])
    assert code == 0
    assert _tree(tmp_path, skip=out) == before
