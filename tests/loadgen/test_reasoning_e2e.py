"""Reasoning and tool calls end to end on every streaming API: `goodput run` against the reference server
(sim engine) acting as a reasoning, tool-calling model. The server's own per-chunk send times (its timing
extension, seconds since it received the request) and its usage are the truth the records are held to."""

from __future__ import annotations

import json
import statistics
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
    # send times. The median over the requests: one descheduling of this shared 2-core host between a write
    # and its read shifts a single sample by milliseconds without any fault in the client.
    assert min(ttfo_err) > -BOUND_S / 10, ttfo_err
    assert statistics.median(abs(e) for e in reasoning_err) < BOUND_S, reasoning_err
