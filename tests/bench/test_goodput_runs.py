"""The comparison's instrument: one `goodput run` command line for every server, figures read back."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import pytest

from bench.goodput_runs import (
    Scenario,
    Shared,
    agreement,
    alternating_order,
    median,
    ratio,
    read_run,
    run_command,
)

SHARED = Shared(goodput="goodput", model="/m/tiny", tokenizer="/m/tiny/tokenizer.json", seed=3)
SCENARIO = Scenario(concurrency=32, prompt_tokens=160, output_tokens=64, duration_s=10)


def _flags(command: list[str]) -> dict[str, str]:
    return {a: b for a, b in itertools.pairwise(command) if a.startswith("--")}


def test_servers_differ_only_in_url_and_output() -> None:
    a = run_command(SHARED, SCENARIO, "http://127.0.0.1:1", Path("/r/a"))
    b = run_command(SHARED, SCENARIO, "http://127.0.0.1:2", Path("/r/b"))
    differing = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    assert [a[i - 1] for i in differing] == ["--url", "--output"]


def test_request_bodies_are_greedy_without_ignore_eos_and_from_the_same_prompts() -> None:
    command = run_command(SHARED, SCENARIO, "http://x", Path("/r"))
    flags = _flags(command)
    assert "--no-ignore-eos" in command and "--ignore-eos" not in command
    assert flags["--temperature"] == "0"
    assert flags["--seed"] == "3" and flags["--tokenizer"] == "/m/tiny/tokenizer.json"
    assert flags["--model"] == "/m/tiny"
    assert flags["--arrival"] == "concurrency" and flags["--concurrency"] == "32"
    assert (
        flags["--prompt-tokens"] == "160"
        and flags["--output-tokens"] == "64"
        and flags["--duration"] == "10s"
    )
    assert flags["--server-metrics"] == "none"  # no server gets scrapes the other does not


def test_alternation_is_a_b_a_b() -> None:
    assert alternating_order(["A", "B"], 3) == [(0, "A"), (0, "B"), (1, "A"), (1, "B"), (2, "A"), (2, "B")]


def test_median_ratio_and_agreement() -> None:
    assert median([3.0, None, 1.0, 2.0]) == 2.0
    assert median([None]) is None
    assert ratio(3216.0, 3333.0) == pytest.approx(0.965, abs=1e-3)
    assert ratio(1.0, 0.0) is None
    assert agreement(
        {1: (64, "length"), 2: (10, "stop"), 3: (5, "stop")}, {1: (64, "length"), 2: (11, "stop")}
    ) == (2, 1)


@pytest.mark.slow
def test_read_run_reads_a_real_run_of_the_embedded_server(tmp_path: Path) -> None:
    goodput = str(Path(sys.executable).with_name("goodput"))
    shared = Shared(goodput=goodput, model="goodput-tiny", tokenizer="bytes")
    command = run_command(shared, Scenario(2, 16, 8, 1.0), "URL", tmp_path / "run")
    url_at = command.index("--url")
    del command[url_at : url_at + 2]  # no --url: goodput starts its embedded reference server
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    figures = read_run(tmp_path / "run")
    assert figures.ok > 0 and figures.failed == 0
    assert figures.output_tok_s > 0 and figures.ttft_p50_ms is not None
    assert (
        figures.prompt_tokens_mean is not None and 16 <= figures.prompt_tokens_mean <= 20
    )  # + chat template
    assert len(figures.outputs) == figures.ok
    assert all(tokens is not None and 1 <= tokens <= 8 for tokens, _ in figures.outputs.values())
