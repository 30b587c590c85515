"""`goodput gate`, `goodput compare` and the gate options of `goodput run` through the CLI, on run
directories made from hand-written records (no server): exit codes 0 / 99 / 2, verdict lines, the CI
files, and usage errors before any request is sent."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from loadgen.cli import run_cli
from metrics.records.record import RequestRecord

UNREACHABLE = "http://127.0.0.1:9"
MS = 1_000_000



def _make_run(path: Path, *, n: int = 60, ttft_scale: float = 1.0, seed: int = 0, slo: list[str] | None = None) -> Path:
    """A run directory: records.jsonl, run.json, and the outputs `goodput report` builds from them."""
    path.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    with (path / "records.jsonl").open("wb") as f:
        for i in range(n):
            a = i * 50 * MS
            first = a + round(rng.lognormal(np.log(100), 0.2) * ttft_scale * MS)
            chunks = [first + j * 10 * MS for j in range(5)]
            f.write(RequestRecord(id=i, intended_ns=a, sent_ns=a, chunk_ns=chunks, chunk_tokens=[1] * 5,
                                  token_source="server", output_tokens=5, output_tokens_estimated=False,
                                  prompt_tokens=100 if i % 2 else 1000, prompt_tokens_estimated=False,
                                  cached_tokens=0, closed_ns=chunks[-1] + MS, tags={"scenario": "chat"}).to_json())
    run = {"target": "http://test", "complete": True, "settings": {"slo": slo or ["ttft=150ms"]}}
    (path / "run.json").write_text(json.dumps(run))
    assert run_cli(["report", str(path), "--quiet"]) == 0
    return path


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _make_run(tmp_path_factory.mktemp("runs") / "base", seed=1)


@pytest.fixture(scope="module")
def slow(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _make_run(tmp_path_factory.mktemp("runs") / "slow", seed=2, ttft_scale=2.0)


def test_gate_passes_and_fails(base: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junit, md = tmp_path / "g.xml", tmp_path / "g.md"
    assert run_cli(["gate", str(base), "--threshold", "ttft:p(99) < 1s", "--threshold", "errors:rate == 0"]) == 0
    out = capsys.readouterr().out
    assert "PASS ttft:p(99) < 1s  measured" in out and "thresholds: all 2 passed" in out
    code = run_cli(["gate", str(base), "--threshold", "ttft:p(99) < 1s", "--threshold", "ttft:p(50) < 10ms",
                    "--junit", str(junit), "--markdown", str(md)])
    captured = capsys.readouterr()
    assert code == 99
    # every verdict line names its limit, and the whole summary is on stdout, failed or not
    assert "FAIL ttft:p(50) < 10ms  measured 100.4 ms, limit 10 ms\n" in captured.out
    assert "thresholds: 1 of 2 failed" in captured.out and captured.err == ""
    assert ET.parse(junit).getroot().get("failures") == "1"
    assert md.read_text().startswith("### goodput gate: FAILED")


def test_gate_reads_records_when_the_summary_cannot_answer(base: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = run_cli(["gate", str(base), "--threshold", "ttft{prompt_bucket:512-2k,scenario:chat}:p(75) < 1s",
                    "--threshold", "ttft{prompt_bucket:512-2k,scenario:chat}:count == 30"])
    assert code == 0, capsys.readouterr()


def test_gate_against_a_baseline(base: Path, slow: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rel = ["--threshold", "ttft:p(50) < baseline * 1.2", "--threshold", "goodput:attainment >= baseline - 0.02"]
    assert run_cli(["gate", str(slow), "--baseline", str(base), *rel]) == 99
    assert run_cli(["gate", str(base), "--baseline", str(base), *rel]) == 0
    out = capsys.readouterr().out
    assert "limit" in out and "baseline" in out


def test_gate_config_file_with_slo(base: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    strict = tmp_path / "strict.yaml"
    strict.write_text("slo: {ttft: 1ms}\nthresholds:\n  - goodput:attainment >= 0.9\n")
    lenient = tmp_path / "lenient.toml"
    lenient.write_text('slo = ["ttft=10s"]\nthresholds = ["goodput:attainment >= 0.9"]\n')
    assert run_cli(["gate", str(base), "--config", str(strict)]) == 99  # re-judged: nobody meets 1 ms
    assert run_cli(["gate", str(base), "--config", str(lenient)]) == 0
    capsys.readouterr()


def test_gate_slo_on_top_of_the_config_files(base: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--slo adds to the config file's SLO: a bound both give is refused, named as the command line wrote it,
    and a fluidity bound given on the command line takes its deadlines from the file's ttft and tpot."""
    cfg = tmp_path / "gate.yaml"
    cfg.write_text("slo: {ttft: 10s, tpot: 1s, itl_max: 5s}\nthresholds:\n  - requests:count >= 1\n")
    assert run_cli(["gate", str(base), "--config", str(cfg), "--slo", "max_itl=1s"]) == 2
    err = capsys.readouterr().err
    assert "SLO 'max_itl' given twice" in err and len(err.strip().splitlines()) == 1
    assert run_cli(["gate", str(base), "--config", str(cfg), "--slo", "fluidity=0.5"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize(("args", "needle"), [
    (["--threshold", "ttft:p(101) < 1s"], "outside 0-100"),
    (["--threshold", "ttft:p(99) < baseline * 1.1"], "pass --baseline"),
    (["--threshold", "ttft{prompt_bucket:1k-2k}:p(99) < 1s"], "no prompt_tokens bucket"),
    (["--threshold", "nonsense"], "expected METRIC"),
    ([], "thresholds (--threshold or --config)"),
    (["--threshold", "ttft:p(99)<1s", "--baseline", "/nonexistent/run"], "not a run directory"),
    (["--threshold", "ttft:p(99)<1s", "--slo", "ttft=fast"], "invalid SLO"),
])
def test_gate_usage_errors_exit_2(base: Path, args: list[str], needle: str, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    junit = tmp_path / "never.xml"
    assert run_cli(["gate", str(base), *args, "--junit", str(junit)]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1
    assert not junit.exists()


def test_gate_warns_about_an_incomplete_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _make_run(tmp_path / "r", n=12)
    info = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**info, "complete": False, "aborted": True}))
    assert run_cli(["report", str(run), "--quiet"]) == 0
    assert run_cli(["gate", str(run), "--threshold", "requests:count == 12"]) == 0
    assert "incomplete run (aborted by a threshold)" in capsys.readouterr().err


def test_gate_on_a_missing_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["gate", str(tmp_path / "nothing"), "--threshold", "ttft:p(99)<1s"]) == 2
    assert "not a run directory" in capsys.readouterr().err


def test_compare_cli(base: Path, slow: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["compare", str(base), str(slow), "--resamples", "300"]) == 0
    out = capsys.readouterr().out
    assert "regression" in out and (slow / "compare.md").is_file()
    md = tmp_path / "c.md"
    assert run_cli(["compare", str(base), str(slow), "--output", str(md), "--fail-on-regression",
                    "--stat", "ttft:p(50)", "--no-buckets", "--resamples", "300"]) == 99
    assert "❌ regression" in md.read_text()
    assert run_cli(["compare", str(base), str(slow), "--output", str(md), "--fail-on-regression",
                    "--stat", "ttft:p(50)", "--min-change", "200%", "--resamples", "300"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize(("args", "needle"), [
    (["--stat", "ttft:p(200)"], "outside 0-100"),
    (["--min-change", "lots"], "--min-change"),
    (["--resamples", "5"], "resamples"),
])
def test_compare_usage_errors(base: Path, args: list[str], needle: str, tmp_path: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["compare", str(base), str(base), "--output", str(tmp_path / "c.md"), *args]) == 2
    assert needle in capsys.readouterr().err
    assert run_cli(["compare", str(base), str(tmp_path), "--output", str(tmp_path / "c.md")]) == 2


@pytest.mark.parametrize(("args", "needle"), [
    (["--threshold", "ttft:p(101)<1s"], "outside 0-100"),
    (["--threshold", "latency:p(99)<1s"], "unknown metric"),
    (["--threshold", "ttft:p(99) < baseline"], "pass --baseline"),
    (["--threshold", "ttft{prompt_bucket:9k-10k}:p(99)<1s"], "no prompt_tokens bucket"),
    (["--abort-on-fail"], "need thresholds"),
    (["--threshold", "ttft:p(99)<1s", "--abort-delay", "soon"], "--abort-delay"),
    (["--config", "/nonexistent/gate.yaml"], "cannot read config"),
])
def test_run_rejects_bad_gates_before_any_request(args: list[str], needle: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code = run_cli(["run", "--url", UNREACHABLE, "--model", "m", "--output", str(out), *args])
    err = capsys.readouterr().err
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_run_rejects_an_invalid_config_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "gate.yaml"
    config.write_text("slo: {ttft: 500ms}\nthresholds:\n  - ttft:p(99) < 500ms\n  - goodput:p(99) > 1\n")
    out = tmp_path / "out"
    code = run_cli(["run", "--url", UNREACHABLE, "--model", "m", "--output", str(out), "--config", str(config)])
    err = capsys.readouterr().err
    assert code == 2 and "thresholds[1]" in err and "unknown aggregation" in err
    assert not out.exists()


@pytest.fixture(scope="module")
def shifted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Four baseline runs of one configuration, each shifted as a whole by up to +55 % (a busy machine),
    a twin of the same configuration shifted like the second, and three quiet baseline runs."""
    root = tmp_path_factory.mktemp("shifted")
    runs = {f"b{i}": _make_run(root / f"b{i}", seed=10 + i, ttft_scale=s)
            for i, s in enumerate([1.0, 1.55, 1.15, 0.95])}
    runs["twin"] = _make_run(root / "twin", seed=20, ttft_scale=1.55)
    runs.update({f"q{i}": _make_run(root / f"q{i}", seed=30 + i, ttft_scale=s) for i, s in enumerate([1.0, 1.03, 0.98])})
    runs["slow"] = _make_run(root / "slow", seed=40, ttft_scale=1.5)
    return runs


def test_compare_judges_against_the_spread_of_repeated_baselines(shifted: dict[str, Path], tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    md = tmp_path / "c.md"
    opts = ["--output", str(md), "--fail-on-regression", "--resamples", "300", "--no-buckets"]
    # One baseline: the shifted twin is flagged, and the output says that it may be run-to-run noise.
    assert run_cli(["compare", str(shifted["b0"]), str(shifted["twin"]), *opts]) == 99
    out = capsys.readouterr().out
    assert "baseline: 1 run — run-to-run variance not measured" in out and "regression(s) flagged" in out
    assert "One baseline run" in md.read_text()
    # Four baselines: the same twin is inside their run-to-run spread.
    bases = [str(shifted[f"b{i}"]) for i in range(4)]
    assert run_cli(["compare", *bases, str(shifted["twin"]), *opts]) == 0
    out = capsys.readouterr().out
    assert "0 regression(s) flagged" in out and "baseline: 4 runs" in out
    text = md.read_text()
    assert "(4 runs, their mean)" in text and "`ttft:p(50)`" in text and "within run-to-run spread (±" in text
    assert "| 240/60 |" in text
    # Quiet baselines: a consistent +50 % is flagged.
    quiet = [str(shifted[f"q{i}"]) for i in range(3)]
    assert run_cli(["compare", *quiet, str(shifted["slow"]), *opts]) == 99
    assert "❌ regression" in md.read_text()
    capsys.readouterr()


@pytest.mark.parametrize(("args", "needle"), [
    (["--min-change-abs", "soon"], "--min-change-abs"),
    (["--min-change", "-5%"], "must not be negative"),
])
def test_compare_rejects_bad_minimum_changes(base: Path, args: list[str], needle: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["compare", str(base), str(base), "--output", str(tmp_path / "c.md"), *args]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "c.md").exists()


def test_compare_needs_a_baseline_and_a_candidate(base: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["compare", str(base)]) == 2
    assert "Missing argument" in capsys.readouterr().err
