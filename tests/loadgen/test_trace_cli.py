"""`goodput trace inspect` and the trace flags of `goodput run`: shapes, predictions, and one-line usage
errors before anything is sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loadgen.cli import run_cli
from tests.loadgen._traces import reuse_rows, write_azure, write_mooncake

UNREACHABLE = "http://127.0.0.1:9"


def test_inspect_prints_the_shape_and_the_prediction(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_mooncake(tmp_path / "t.jsonl", reuse_rows(40, gap_ms=1000))
    assert run_cli(["trace", "inspect", str(path)]) == 0
    out = capsys.readouterr().out
    # Shorter than a minute: the peak is over the whole 39 s span (40 requests), the mean over its 39 gaps.
    assert "(mooncake)" in out and "requests: 40 over 39.0 s" in out
    assert "mean 60.0 over the span, peak 61.5 in the busiest 39 s" in out
    assert "input tokens (ISL):" in out and "output tokens (OSL):" in out
    assert "predicted prefix-cache hit rate (blocks of 16 tokens, the default: the server's own is unknown" in out
    assert "unbounded" in out


def test_inspect_json_with_an_lru_cache(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_mooncake(tmp_path / "t.jsonl", reuse_rows(40, gap_ms=500))
    assert run_cli(["trace", "inspect", str(path), "--json", "--block-size", "32", "--cache-blocks", "64"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["requests"] == 40 and data["duration_s"] == 19.5 and data["mean_rate_per_min"] == pytest.approx(120)
    unbounded, lru = data["prefix_cache"]["unbounded"], data["prefix_cache"]["lru"]
    assert unbounded["block_size"] == lru["block_size"] == 32 and lru["cache_blocks"] == 64
    assert 0 <= lru["hit_rate"] < unbounded["hit_rate"] < 1
    assert data["blocks"]["block_tokens"] == 512 and data["input_tokens"]["max"] <= 5 * 512


def test_inspect_a_trace_without_reuse(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_azure(tmp_path / "a.csv", [("2024-05-01 10:00:00", 100, 10), ("2024-05-01 10:00:30", 300, 20)])
    assert run_cli(["trace", "inspect", str(path)]) == 0
    assert "0% (this format records no prompt reuse" in capsys.readouterr().out


@pytest.mark.parametrize(("text", "needle"), [
    ("x,y\n1,2\n", "columns found: x, y"),
    ('{"timestamp": 1, "input_length": 3, "output_length": 1}\n{oops\n', "t.txt:2: not valid JSON"),
])
def test_inspect_refuses_a_bad_file_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                                needle: str) -> None:
    path = tmp_path / "t.txt"
    path.write_text(text)
    assert run_cli(["trace", "inspect", str(path)]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(("extra", "needle"), [
    (["--arrival", "gamma"], "--arrival gamma does not apply"),
    (["--turns", "3"], "--turns does not apply to --trace"),
    (["--time-scale", "2", "--rate", "5"], "--time-scale and --rate both rescale"),
    (["--time-scale", "0"], "--time-scale must be greater than 0"),
    (["--trace-format", "parquet"], "unknown --trace-format"),
])
def test_run_refuses_trace_flags_that_do_not_fit(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 extra: list[str], needle: str) -> None:
    path = write_mooncake(tmp_path / "t.jsonl", reuse_rows(3))
    assert run_cli(["run", "--url", UNREACHABLE, "--model", "m", "--trace", str(path), *extra,
                    "--output", str(tmp_path / "o")]) == 2
    assert needle in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_run_refuses_a_malformed_trace_before_sending(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"timestamp": 0, "input_length": 5, "output_length": 1}\n{"timestamp": 1}\n')
    assert run_cli(["run", "--url", UNREACHABLE, "--model", "m", "--trace", str(path),
                    "--output", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert f"{path}:2: missing input_length, output_length" in err and not (tmp_path / "o").exists()


@pytest.mark.parametrize(("flags", "needle"), [
    (["--time-scale", "2"], "--time-scale, --trace-start and --trace-duration apply to --trace only"),
    (["--think-time", "1s"], "--think-time separates the turns of a conversation: it needs --turns"),
    (["--arrival", "trace"], "--arrival trace needs --trace FILE"),
    (["--prompt-sizing", "tokenize", "--tokenizer", "bytes"], "give one"),
])
def test_run_refuses_flags_without_their_workload(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  flags: list[str], needle: str) -> None:
    assert run_cli(["run", "--url", UNREACHABLE, "--model", "m", *flags, "--print-config"]) == 2
    assert needle in capsys.readouterr().err
