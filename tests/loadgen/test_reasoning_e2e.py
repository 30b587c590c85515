"""Reasoning and tool calls end to end on every streaming API: `goodput run` against the reference server
(sim engine) acting as a reasoning, tool-calling model. The server's own per-chunk send times (its timing
extension, seconds since it received the request) and its usage are the truth the records are held to."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loadgen.cli import run_cli
from tests.refserver.test_serve import _start as start_refserver

pytest.importorskip("uvicorn")

REASONING = 4  # every answer starts with 4 reasoning tokens
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
QUICK = ["--model", "m", "--prompt-tokens", "8", "--output-tokens", "12", "--ignore-eos", "--tokenizer", "words",
         "--prompt-sizing", "counter", "--server-metrics", "none", "--no-html", "--quiet", "--seed", "2",
         "--requests", "10", "--concurrency", "1"]
BOUND_S = 0.001  # the brief's bound: 1 ms


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    """The server in its own process (as users run it): no interpreter lock shared with the client, whose
    reads it would otherwise delay by whole switch intervals on a busy host."""
    proc, base = start_refserver("--engine", "sim", "--sim-model", "Llama-3.1-8B", "--sim-gpu", "H100-SXM",
                                 "--served-model-name", "m", "--reasoning-tokens", str(REASONING),
                                 "--tool-call-rate", "0.5", "--seed", "1")
    try:
        yield base
    finally:
        proc.kill()
        proc.wait()


def _run(url: str, endpoint: str, tmp_path: Path) -> list[dict[str, Any]]:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    out = tmp_path / endpoint
    code = run_cli(["run", "--url", url, "--endpoint", endpoint, "--tools", str(tools), *QUICK,
                    "--output", str(out)])
    assert code == 0
    return [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("endpoint", ["chat", "responses", "messages"])
def test_ttfo_reasoning_time_and_token_counts_match_the_server(url: str, endpoint: str, tmp_path: Path) -> None:
    records = _run(url, endpoint, tmp_path)
    assert len(records) == 10 and all(r["status"] == "ok" for r in records)
    ttfo_err: list[float] = []
    reasoning_err: list[float] = []
    kinds = set()
    for r in records:
        # Counts: the server's usage details (Messages has none for thinking: the server's per-event counts).
        source = "server" if endpoint == "messages" else "usage"
        assert (r["reasoning_tokens"], r["reasoning_tokens_source"]) == (REASONING, source)
        assert r["output_tokens"] == 12 and not r["output_tokens_estimated"]
        # The sim engine makes one token per step, so each reasoning token is one event and the answer
        # starts at event REASONING (events read together share a stamp: a stamp alone cannot tell).
        first_answer = REASONING
        assert r["chunk_ns"][first_answer] == r["answer_ns"] and r["chunk_ns"][0] == r["reasoning_ns"]
        assert r["chunk_tokens"][:first_answer] == [1] * REASONING
        # Times: the client's TTFO (send -> first answer) against the server's (arrival -> its send of that
        # chunk), which differ by the request's transit and the chunk's delivery on loopback only.
        server = r["server_chunk_s"]
        ttfo_err.append((r["answer_ns"] - r["sent_ns"]) / 1e9 - server[first_answer])
        reasoning_err.append((r["answer_ns"] - r["reasoning_ns"]) / 1e9 - (server[first_answer] - server[0]))
        if r["tool_calls"]:
            kinds.add("tool")
            assert r["tool_calls"] == 1 and r["finish_reason"] == "tool_calls"
            assert r["tool_call_ns"] == r["answer_ns"] <= r["tool_call_done_ns"] <= r["closed_ns"]
        else:
            kinds.add("text")
            assert r["tool_call_ns"] is None and r["finish_reason"] == "length"
    assert kinds == {"tool", "text"}  # the seeded rate 0.5 gave both kinds of answer
    # TTFO is never shorter than the server's own (the request's transit and the delivery only add), and
    # past the first output (TTFT's accuracy: tests/loadgen/test_client_timing.py) the client's TTFO adds
    # exactly the server's reasoning span: TTFO − TTFT against the server's first-answer minus first-output
    # send times. Judged on the best third of the requests: a descheduling of a busy 2-core host between a
    # write and its read shifts single samples by milliseconds (seen with a second suite running beside
    # this one) without any fault in the client, while a stamp on the wrong chunk or taken at the wrong
    # moment shifts every sample by a step of the engine (~6 ms here).
    assert min(ttfo_err) > -BOUND_S / 10, ttfo_err
    assert sorted(abs(e) for e in reasoning_err)[len(reasoning_err) // 3] < BOUND_S, reasoning_err


def test_workers_a_sweep_and_the_gate_on_the_new_apis(url: str, tmp_path: Path) -> None:
    """Two worker processes on Messages, a two-point sweep on Responses with a TTFO threshold judged per
    point: every request recorded once with its reasoning, the threshold's verdict from the records."""
    out = tmp_path / "workers"
    base = ["--url", url, "--model", "m", "--prompt-tokens", "8", "--output-tokens", "12", "--ignore-eos",
            "--tokenizer", "words", "--prompt-sizing", "counter", "--server-metrics", "none", "--no-html",
            "--quiet", "--seed", "3"]
    assert run_cli(["run", *base, "--endpoint", "messages", "--requests", "12", "--rate", "20", "--workers", "2",
                    "--output", str(out)]) == 0
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in records) == list(range(12)) and {r["worker"] for r in records} == {0, 1}
    assert all(r["status"] == "ok" and r["reasoning_tokens"] == REASONING for r in records)
    sweep = tmp_path / "sweep"
    assert run_cli(["sweep", *base, "--endpoint", "responses", "--rates", "5,10", "--point-requests", "6",
                    "--threshold", "ttfo:p(50)<30s", "--output", str(sweep)]) == 0
    doc = json.loads((sweep / "sweep.json").read_text())
    assert len(doc["points"]) == 2
    for point in sorted((sweep / "points").iterdir()):
        summary = json.loads((point / "summary.json").read_text())
        measured = summary["requests"]["in_window_ok"]  # the point's measurement window
        assert measured >= 4 and summary["requests"]["succeeded"] == 6
        assert summary["reasoning"]["reasoned"] == measured == summary["latency"]["ttfo_s"]["count"]
