"""Token counts per chunk for each source of docs/metrics.md, end to end through the scripted server."""

from __future__ import annotations

from typing import Any

import pytest

from loadgen.http.send.client import StreamingClient
from loadgen.types import ClientConfig, Endpoint, WorkItem
from metrics.records.record import RequestRecord
from tests.servers.scripted import (
    DONE,
    END,
    ReceivedRequest,
    ScriptedServer,
    Send,
    chat_chunk,
    chunk,
    event,
    head,
    usage,
)

# Tokens in each content chunk as the server generated them (a chunk may carry several).
TRUE_K = [1, 2, 1, 3, 1]


def _stream(objs: list[dict[str, Any]], *, done: bool = True) -> list[Send]:
    body = b"".join(chunk(event(o)) for o in objs)
    return [Send(head()), Send(body + (chunk(DONE) if done else b"") + END)]


def usage_delta(_: ReceivedRequest) -> list[Send]:
    """vLLM with continuous_usage_stats: usage on every event, the last token counted on the finish event."""
    objs = [chat_chunk(role="assistant", content="", usage=usage(9, 0))]
    total = 0
    for i, k in enumerate(TRUE_K):
        total += k
        objs.append(chat_chunk(f"w{i}", usage=usage(9, total)))
    objs.append(chat_chunk("", finish_reason="length", usage=usage(9, total + 1)))
    final = {
        "id": "x",
        "object": "chat.completion.chunk",
        "choices": [],
        "usage": usage(9, total + 1, cached=4),
    }
    return _stream([*objs, final])


def server_counts(_: ReceivedRequest) -> list[Send]:
    """The reference server: goodput {t, n} per chunk, extras and cached tokens on the final one."""
    objs = [chat_chunk(f"w{i}", goodput={"t": 0.1 * (i + 1), "n": k}) for i, k in enumerate(TRUE_K)]
    objs.append(
        chat_chunk(
            "",
            finish_reason="stop",
            goodput={
                "t": 0.6,
                "n": 0,
                "queue_s": 0.01,
                "prefill_s": 0.02,
                "decode_s": 0.5,
                "cached_tokens": 3,
            },
        )
    )
    return _stream(objs)


def final_only(_: ReceivedRequest) -> list[Send]:
    objs: list[dict[str, Any]] = [chat_chunk(f"w{i}") for i in range(len(TRUE_K))]
    objs.append(chat_chunk("", finish_reason="stop"))
    objs.append({"id": "x", "choices": [], "usage": usage(9, sum(TRUE_K))})
    return _stream(objs)


def nothing(_: ReceivedRequest) -> list[Send]:
    objs = [chat_chunk(f"w{i}") for i in range(len(TRUE_K))]
    objs.append(chat_chunk(None, finish_reason="stop"))
    return _stream(objs)


def llama_cpp_completions(_: ReceivedRequest) -> list[Send]:
    """A /v1/completions stream with llama.cpp's final `timings` (cache_n) and no [DONE]."""
    objs: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "text": f"w{i}", "finish_reason": None}]} for i in range(len(TRUE_K))
    ]
    objs.append(
        {
            "choices": [{"index": 0, "text": "", "finish_reason": "stop"}],
            "timings": {"cache_n": 6, "prompt_n": 3, "predicted_ms": 12.5},
        }
    )
    return _stream(objs, done=False)


async def _send(handler: Any, endpoint: Endpoint = "chat", target: int | None = None) -> RequestRecord:
    async with ScriptedServer(handler) as server:
        config = ClientConfig(base_url=server.url + "/v1", model="m", endpoint=endpoint)
        async with StreamingClient(config) as client:
            return await client.send(
                WorkItem(prompt="hi", max_tokens=10, prompt_tokens_target=target), request_id=1, intended_ns=0,
                anchor_ns=0,
            )


async def test_usage_delta_counts_exactly_and_carries_uncounted_tokens() -> None:
    r = await _send(usage_delta)
    assert r.status == "ok" and r.token_source == "usage_delta"
    # The role event (Δ0) is no chunk; the finish event's Δ1 goes to the last content chunk.
    assert r.chunk_tokens == [*TRUE_K[:-1], TRUE_K[-1] + 1]
    assert r.output_tokens == sum(TRUE_K) + 1 and not r.output_tokens_estimated
    assert r.prompt_tokens == 9 and not r.prompt_tokens_estimated
    assert r.cached_tokens == 4
    assert r.finish_reason == "length"


async def test_server_counts_and_server_timing() -> None:
    r = await _send(server_counts)
    assert r.status == "ok" and r.token_source == "server"
    assert r.chunk_tokens == TRUE_K
    assert r.output_tokens == sum(TRUE_K) and r.output_tokens_estimated  # no usage: Σk_j
    assert r.server_chunk_s == pytest.approx([0.1, 0.2, 0.3, 0.4, 0.5])
    assert r.server == {"queue_s": 0.01, "prefill_s": 0.02, "decode_s": 0.5, "cached_tokens": 3}
    assert r.cached_tokens == 3
    assert r.prompt_tokens is None


async def test_final_usage_only_is_split_by_text_length_without_a_tokenizer() -> None:
    r = await _send(final_only)
    assert r.status == "ok" and r.token_source == "final_split_by_text_length"
    # Five chunks of equal text length share N = 8: largest remainders go to the earlier chunks.
    assert r.chunk_tokens == [2, 2, 2, 1, 1]
    assert r.output_tokens == sum(TRUE_K) and not r.output_tokens_estimated
    assert r.cached_tokens is None  # absent is not zero


async def test_estimate_when_the_server_says_nothing() -> None:
    r = await _send(nothing)
    assert r.status == "ok" and r.token_source == "estimate_token_events"
    assert r.chunk_tokens == [1] * len(TRUE_K)
    assert r.output_tokens == len(TRUE_K) and r.output_tokens_estimated
    assert r.prompt_tokens is None and r.cached_tokens is None


async def test_prompt_tokens_fall_back_to_the_workloads_count_marked_as_estimate() -> None:
    silent = await _send(nothing, target=5)
    assert (silent.prompt_tokens, silent.prompt_tokens_estimated, silent.prompt_tokens_target) == (5, True, 5)
    told = await _send(usage_delta, target=5)
    assert (told.prompt_tokens, told.prompt_tokens_estimated) == (9, False)  # the server's count wins


async def test_completions_endpoint_with_llama_cpp_timings_and_no_done() -> None:
    r = await _send(llama_cpp_completions, endpoint="completions")
    assert r.status == "ok", r.error_message  # finish_reason then a clean end: success
    assert len(r.chunk_ns) == len(TRUE_K)
    assert r.cached_tokens == 6
    assert r.server == {"timings": {"cache_n": 6, "prompt_n": 3, "predicted_ms": 12.5}}


async def test_request_body_asks_for_running_usage() -> None:
    seen: list[dict[str, Any]] = []

    def capture(request: ReceivedRequest) -> list[Send]:
        seen.append(request.json())
        assert request.path == "/v1/chat/completions"
        assert request.headers["authorization"] == "Bearer sk-secret"
        return nothing(request)

    async with ScriptedServer(capture) as server:
        config = ClientConfig(base_url=server.url, model="m", api_key="sk-secret", ignore_eos=True)
        async with StreamingClient(config) as client:
            r = await client.send(
                WorkItem(prompt="hi", max_tokens=7, min_tokens=7), request_id=1, intended_ns=0, anchor_ns=0
            )
            assert "sk-secret" not in repr(client)
    assert "sk-secret" not in r.to_json().decode()
    body = seen[0]
    assert body["stream"] is True and body["max_tokens"] == 7 and body["min_tokens"] == 7
    assert body["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}
    assert body["ignore_eos"] is True
