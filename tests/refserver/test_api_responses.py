"""`POST /v1/responses` (the OpenAI Responses API) against the deterministic fake engine: every event of a
stream in order, the response object, usage, the timing extension, multi-turn input, errors."""

from __future__ import annotations

from typing import Any

import httpx

from refserver.text.tokenizer import ByteTokenizer
from tests.refserver.fake_engine import DEFAULT_SCRIPT, FakeEngine, make_app, serve_in_thread
from tests.refserver.named_sse import Event, parse_named, post, read_stream

SCRIPT_TEXT = bytes(DEFAULT_SCRIPT).decode()
OUTPUT_TOKENS = len(DEFAULT_SCRIPT) + 1  # + eos
PROMPT_TOKENS = len(ByteTokenizer().encode("<|bos|><|user|>Say hello<|assistant|>", add_bos=False))


def check_framing(events: list[Event]) -> None:
    """Each event's `event:` line names its `type`, and sequence numbers count from 0 without a gap."""
    assert [e.name for e in events] == [e.data["type"] for e in events]
    assert [e.data["sequence_number"] for e in events] == list(range(len(events)))


def test_stream_events_in_order_with_usage_and_text(base_url: str) -> None:
    events = read_stream(f"{base_url}/v1/responses", {"model": "goodput-tiny", "input": "Say hello"})
    check_framing(events)
    names = [e.name for e in events]
    deltas = len(SCRIPT_TEXT)
    assert names == [
        "response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
        *["response.output_text.delta"] * deltas, "response.output_text.done", "response.content_part.done",
        "response.output_item.done", "response.completed",
    ]  # fmt: skip
    created = events[0].data["response"]
    assert created["status"] == "in_progress" and created["object"] == "response" and created["output"] == []
    assert created["id"].startswith("resp_") and created["model"] == "goodput-tiny"
    added = events[2].data
    item_id = added["item"]["id"]
    assert added["output_index"] == 0
    assert added["item"] == {"id": item_id, "type": "message", "status": "in_progress", "role": "assistant",
                             "content": []}
    assert events[3].data["part"] == {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
    text_deltas = [e.data for e in events if e.name == "response.output_text.delta"]
    assert all((d["item_id"], d["output_index"], d["content_index"]) == (item_id, 0, 0) for d in text_deltas)
    assert "".join(d["delta"] for d in text_deltas) == SCRIPT_TEXT
    assert events[-4].data["text"] == SCRIPT_TEXT
    done_item = events[-2].data["item"]
    assert done_item["status"] == "completed"
    assert done_item["content"] == [{"type": "output_text", "text": SCRIPT_TEXT, "annotations": [], "logprobs": []}]
    final = events[-1].data["response"]
    assert final["status"] == "completed" and final["output"] == [done_item]
    assert final["usage"] == {
        "input_tokens": PROMPT_TOKENS, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": OUTPUT_TOKENS, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": PROMPT_TOKENS + OUTPUT_TOKENS,
    }  # fmt: skip


def test_timing_extension_on_every_event(base_url: str) -> None:
    events = read_stream(f"{base_url}/v1/responses", {"input": "Say hello"})
    times = [e.data["goodput"]["t"] for e in events]
    assert times == sorted(times)
    # The in-thread server shares this process's clock: it sent each event before the client read it.
    assert all(e.data["goodput"]["t"] <= e.client_s for e in events)
    assert sum(e.data["goodput"]["n"] for e in events) == events[-1].data["response"]["usage"]["output_tokens"]
    assert all(e.data["goodput"]["n"] == 1 for e in events if e.name == "response.output_text.delta")
    assert events[-1].data["goodput"]["n"] == 1  # eos: no text of its own
    final = events[-1].data
    assert all(final["goodput"][k] is not None for k in ("queue_s", "prefill_s", "decode_s"))
    assert final["timings"]["predicted_n"] == OUTPUT_TOKENS


def test_max_output_tokens_ends_incomplete(base_url: str) -> None:
    events = read_stream(f"{base_url}/v1/responses", {"input": "Say hello", "max_output_tokens": 4})
    check_framing(events)
    assert events[-1].name == "response.incomplete"
    response = events[-1].data["response"]
    assert response["status"] == "incomplete"
    assert response["incomplete_details"] == {"reason": "max_output_tokens"}
    assert response["usage"]["output_tokens"] == 4
    assert response["output"][0]["content"][0]["text"] == SCRIPT_TEXT[:4]


def test_non_streaming_response_object(base_url: str) -> None:
    body = post(f"{base_url}/v1/responses", {"input": "Say hello", "instructions": "Be brief."}).json()
    assert body["object"] == "response" and body["status"] == "completed"
    [item] = body["output"]
    assert item["type"] == "message" and item["role"] == "assistant" and item["status"] == "completed"
    assert item["content"][0]["text"] == SCRIPT_TEXT
    # instructions are a system message before the input, as chat would send them
    chat = post(f"{base_url}/v1/chat/completions", {"messages": [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hello"}]}).json()
    assert body["usage"]["input_tokens"] == chat["usage"]["prompt_tokens"]
    assert body["usage"]["output_tokens"] == OUTPUT_TOKENS == body["goodput"]["n"]
    assert body["timings"]["predicted_n"] == OUTPUT_TOKENS


def test_multi_turn_input_items_render_as_the_chat_conversation(base_url: str) -> None:
    items: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris?"}]},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Checking."}]},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city": "Paris"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "18 C and sunny"},
    ]
    body = post(f"{base_url}/v1/responses", {"input": items}).json()
    chat_messages = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "Checking.", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "18 C and sunny"},
    ]
    chat = post(f"{base_url}/v1/chat/completions", {"messages": chat_messages}).json()
    assert body["usage"]["input_tokens"] == chat["usage"]["prompt_tokens"]
    template = "<|bos|><|user|>Weather in Paris?<|assistant|>Checking.<|user|>18 C and sunny<|assistant|>"
    assert body["usage"]["input_tokens"] == len(ByteTokenizer().encode(template, add_bos=False))


def test_refusals_before_the_stream_are_openai_errors(base_url: str) -> None:
    url = f"{base_url}/v1/responses"
    cases = [
        ({"model": "other", "input": "x", "stream": True}, 404, "model"),
        ({"stream": True}, 400, "input"),
        ({"input": [], "stream": True}, 400, "input"),
        ({"input": "x", "previous_response_id": "resp_1"}, 400, "previous_response_id"),
        ({"input": [{"type": "web_search_call"}]}, 400, "input[0].type"),
        ({"input": "x", "max_output_tokens": 0}, 400, "max_output_tokens"),
        ({"input": "x", "max_output_tokens": 10**6}, 400, "max_output_tokens"),
        ({"input": "x", "tools": [{"type": "function", "name": "f"}], "tool_choice": {"type": "function",
                                                                                       "name": "g"}}, 400, "tool_choice"),
    ]
    for body, status, param in cases:
        response = post(url, body)
        assert response.status_code == status, body
        error = response.json()["error"]
        assert set(error) == {"message", "type", "param", "code"}
        assert error["param"] == param, body


def test_an_engine_failure_mid_stream_is_an_error_event_then_response_failed() -> None:
    with serve_in_thread(make_app(FakeEngine(fail_at_token=3))) as url:
        response = httpx.post(f"{url}/v1/responses", json={"input": "Say hello", "stream": True}, timeout=30.0)
    events = parse_named(response.text)
    check_framing(events)
    assert [e.name for e in events][-2:] == ["error", "response.failed"]
    error = events[-2].data
    assert error["code"] == "engine_error" and error["message"]
    failed = events[-1].data["response"]
    assert failed["status"] == "failed"
    assert failed["error"]["code"] == "engine_error"
    text = "".join(e.data["delta"] for e in events if e.name == "response.output_text.delta")
    assert text == SCRIPT_TEXT[:3]


def test_counted_in_the_servers_metrics(base_url: str) -> None:
    post(f"{base_url}/v1/responses", {"input": "Say hello"})
    read_stream(f"{base_url}/v1/responses", {"input": "Say hello", "max_output_tokens": 2})
    text = httpx.get(f"{base_url}/metrics").text
    assert 'vllm:request_success_total{finished_reason="stop",model_name="goodput-tiny"} 1.0' in text
    assert 'vllm:request_success_total{finished_reason="length",model_name="goodput-tiny"} 1.0' in text
    assert f'vllm:generation_tokens_total{{model_name="goodput-tiny"}} {OUTPUT_TOKENS + 2}.0' in text
