"""Real traffic against the reference server: a trace replayed at its timestamps with its lengths and the
prefix-cache hits `goodput trace inspect` predicts, conversations whose cache hits rise with the turn,
`--cache-bust`, and prompts sized by the server (its tokenize endpoint, or a calibration) without a
local tokenizer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loadgen.cli import run_cli
from loadgen.workload.prefix_cache import predict_hits
from loadgen.workload.schedule import trace_offsets
from loadgen.workload.traces import load_trace
from tests.loadgen._traces import reuse_rows, write_mooncake

QUIET = ["--quiet", "--server-metrics", "none"]
SHOWN = ["--server-metrics", "none"]  # without --quiet: the prompt-sizing line is shown


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    from loadgen.run.embedded import embedded_server

    with embedded_server([]) as url:
        yield url


@pytest.fixture(scope="module")
def server_without_tokenize() -> Iterator[str]:
    from loadgen.run.embedded import embedded_server

    with embedded_server(["--no-tokenize-endpoint"]) as url:
        yield url


def _run(args: list[str], out: Path, capsys: pytest.CaptureFixture[str], *, quiet: bool = True
         ) -> tuple[dict[str, Any], list[dict[str, Any]], str]:
    code = run_cli(["run", *args, *(QUIET if quiet else SHOWN), "--output", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    return json.loads((out / "summary.json").read_text()), records, err


def test_a_trace_is_replayed_at_its_timestamps_with_its_lengths_and_predicted_cache_hits(
        server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_mooncake(tmp_path / "trace.jsonl", reuse_rows(30, gap_ms=200, seed=3))
    trace = load_trace(str(path))
    # A seed of its own: the prediction assumes an empty cache, and the module's server is shared, so
    # this run's prompt text (drawn from the seed per block id) must be none another test warmed.
    summary, records, _ = _run(["--url", server, "--trace", str(path), "--time-scale", "1.25",
                                "--tokenizer", "bytes", "--ignore-eos", "--seed", "7301"], tmp_path / "run", capsys)
    assert summary["requests"]["in_window_ok"] == 30
    expected = trace_offsets(trace.arrival_s, time_scale=1.25)
    records.sort(key=lambda r: r["id"])
    # Requests are 200 ms × 1.25 = 250 ms apart: a send later than half of that would put the dispatcher
    # most of a request behind its schedule, which one request at a time on loopback never needs (the
    # bound is wide for a slow shared CI machine; a typical lag is well under a millisecond).
    lag_bound_s = 0.125
    lags = []
    for r, offset, want_in, want_out in zip(records, expected.tolist(), trace.input_tokens.tolist(),
                                            trace.output_tokens.tolist(), strict=True):
        assert r["intended_ns"] == round(offset * 1e9)  # the trace's time, scaled
        lags.append((r["sent_ns"] - r["intended_ns"]) / 1e9)
        assert 0 <= lags[-1] <= lag_bound_s  # late by a small dispatch lag only
        assert r["prompt_tokens_target"] == want_in and r["prompt_tokens"] == want_in + 3  # + the byte chat template
        assert r["output_tokens"] == want_out
    assert summary["latency"]["dispatch_lag_s"]["max"] == pytest.approx(max(lags), abs=1e-9)  # d − a, by hand
    measured = summary["tokens"]["prefix_cache"]["cached_ratio"]
    predicted = predict_hits(trace, block_size=16).hit_rate
    assert predicted is not None and predicted > 0.3
    assert abs(measured - predicted) <= 0.03, (measured, predicted)


def test_cache_bust_leaves_nothing_to_hit_even_on_a_warm_cache(server: str, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = write_mooncake(tmp_path / "trace.jsonl", reuse_rows(12, gap_ms=100, seed=3))
    warm, _, _ = _run(["--url", server, "--trace", str(path), "--tokenizer", "bytes"], tmp_path / "warm", capsys)
    assert warm["tokens"]["prefix_cache"]["cached_tokens"] > 0
    cold, _, _ = _run(["--url", server, "--trace", str(path), "--tokenizer", "bytes", "--cache-bust"],
                      tmp_path / "cold", capsys)
    assert cold["tokens"]["prefix_cache"] == {**cold["tokens"]["prefix_cache"], "cached_tokens": 0}
    assert cold["tokens"]["prefix_cache"]["requests"] == 12


def _turn_ratios(summary: dict[str, Any]) -> dict[str, float]:
    return {b["label"]: b["prefix_cache"]["cached_ratio"] for b in summary["buckets"] if b["dimension"] == "turn"}


def test_a_conversation_run_hits_the_cache_more_with_every_turn(server: str, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--url", server, "--tokenizer", "bytes", "--turns", "5", "--requests", "4", "--rate", "8",
            "--prompt-tokens", "64", "--output-tokens", "8", "--think-time", "20ms"]
    summary, records, _ = _run(args, tmp_path / "chat", capsys)
    assert summary["requests"]["in_window_ok"] == 20 and summary["sessions"]["completed"] == 4
    assert {(r["session"], r["turn"]) for r in records} == {(s, t) for s in range(4) for t in range(1, 6)}
    ratios = _turn_ratios(summary)
    assert list(ratios) == ["1", "2", "3-4", "5-8"]
    assert ratios["1"] == 0 < ratios["2"] < ratios["3-4"] < ratios["5-8"]
    busted, _, _ = _run([*args, "--cache-bust"], tmp_path / "busted", capsys)
    assert set(_turn_ratios(busted).values()) == {0.0}


def _accuracy(summary: dict[str, Any]) -> float:
    p50 = summary["tokens"]["prompt_accuracy"]["abs_rel_error"]["p50"]
    assert summary["tokens"]["prompt_accuracy"]["count"] == 24
    return float(p50)


def test_prompts_are_exact_with_the_servers_tokenize_endpoint(server: str, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    summary, _, err = _run(["--url", server, "--requests", "24", "--rate", "20"], tmp_path / "t", capsys, quiet=False)
    assert "prompts sized with the server's tokenizer" in err
    assert _accuracy(summary) <= 0.02
    run = json.loads((tmp_path / "t" / "run.json").read_text())
    assert run["resolved"]["prompt_sizing"]["method"] == "tokenize"


def test_prompts_are_calibrated_without_a_tokenize_endpoint(server_without_tokenize: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    summary, _, err = _run(["--url", server_without_tokenize, "--requests", "24", "--rate", "20"], tmp_path / "c",
                           capsys, quiet=False)
    assert "no tokenize endpoint" in err and "prompts sized by calibration" in err
    assert _accuracy(summary) <= 0.10
    run = json.loads((tmp_path / "c" / "run.json").read_text())
    assert run["resolved"]["prompt_sizing"]["method"] == "calibrate"
    words, _, _ = _run(["--url", server_without_tokenize, "--requests", "24", "--rate", "20",
                        "--prompt-sizing", "counter"], tmp_path / "w", capsys)
    assert _accuracy(words) > 0.5  # what a word count does to the byte tokenizer: the 5x


def test_asking_for_a_tokenize_endpoint_that_is_not_there_is_an_error(server_without_tokenize: str, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code = run_cli(["run", "--url", server_without_tokenize, "--requests", "2", "--prompt-sizing", "tokenize",
                    *QUIET, "--output", str(tmp_path / "x")])
    err = capsys.readouterr().err
    assert code == 1 and "no usable tokenize endpoint" in err and "HTTP 404" in err
    assert not (tmp_path / "x").exists()
