"""`goodput run --endpoint responses|messages` end to end: the CLI, the spec, the client configuration and
the records, against a loopback server that streams a reasoning model's answer in the API's own events."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loadgen.cli import run_cli
from tests.loadgen._api_streams import (
    M_STOP,
    body,
    m_block_start,
    m_delta,
    m_message_delta,
    m_start,
    r_created,
    r_end,
    r_reasoning,
    r_text,
    r_usage,
    stream,
)
from tests.loadgen._stream_server import threaded_server
from tests.servers.refusing import json_answer, posts_only
from tests.servers.scripted import Action, ReceivedRequest

QUICK = ["--model", "m", "--prompt-tokens", "8", "--output-tokens", "4", "--server-metrics", "none", "--no-html",
         "--requests", "3", "--rate", "50", "--prompt-sizing", "counter", "--quiet", "--api-key", "sk-e2e-secret"]


def reasoning_model(request: ReceivedRequest) -> list[Action]:
    if request.path == "/v1/responses":
        return stream(body(r_created(), r_reasoning("I "), r_reasoning("think"), r_text("yes"),
                           r_end(usage=r_usage(12, 5, cached=4, reasoning=3))))
    if request.path == "/v1/messages":
        return stream(body(m_start(8, cache_read=4), m_block_start(0, "thinking"), m_delta(0, "thinking_delta", "I "),
                           m_delta(0, "thinking_delta", "think"), m_block_start(1, "text"),
                           m_delta(1, "text_delta", "yes"), m_message_delta("end_turn", 5), M_STOP))
    return json_answer(404, {"detail": "Not Found"})


@pytest.mark.parametrize("endpoint", ["responses", "messages"])
def test_a_run_on_the_api_records_reasoning_and_answer(endpoint: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    with threaded_server(posts_only(reasoning_model)) as server:
        code = run_cli(["run", "--url", server.url, "--endpoint", endpoint, *QUICK, "--output", str(out)])
    assert code == 0
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert len(records) == 3 and all(r["status"] == "ok" for r in records)
    for r in records:
        assert (r["prompt_tokens"], r["cached_tokens"], r["output_tokens"]) == (12, 4, 5)
        assert r["reasoning_ns"] == r["chunk_ns"][0] and r["answer_ns"] == r["chunk_ns"][2]
        assert r["finish_reason"] == "stop"
        if endpoint == "responses":  # the server's output_tokens_details
            assert (r["reasoning_tokens"], r["reasoning_tokens_source"]) == (3, "usage")
        else:  # 5 tokens over "I ", "think", "yes" by length (2:5:3, each at least 1): 1, 3, 1
            assert r["chunk_tokens"] == [1, 3, 1]
            assert (r["reasoning_tokens"], r["reasoning_tokens_source"]) == (4, "final_split_by_text_length")
    run = (out / "run.json").read_text()
    assert f'"endpoint": "{endpoint}"' in run and "sk-e2e-secret" not in run
    assert not any("sk-e2e-secret" in p.read_text(errors="replace") for p in out.iterdir() if p.is_file())
