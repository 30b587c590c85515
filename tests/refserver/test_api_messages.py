"""`POST /v1/messages` (Anthropic's Messages API) against the deterministic fake engine: every event of a
stream in order, the message object, usage with the prefix cache, stop reasons, multi-turn tool results,
the key as x-api-key, and errors in Anthropic's shape."""

from __future__ import annotations

from typing import Any

import httpx

from refserver.text.tokenizer import ByteTokenizer
from tests.refserver.fake_engine import DEFAULT_SCRIPT, FakeEngine, make_app, serve_in_thread
from tests.refserver.named_sse import Event, parse_named, post, read_stream

SCRIPT_TEXT = bytes(DEFAULT_SCRIPT).decode()
OUTPUT_TOKENS = len(DEFAULT_SCRIPT) + 1  # + eos
HELLO = [{"role": "user", "content": "Say hello"}]
PROMPT_TOKENS = len(ByteTokenizer().encode("<|bos|><|user|>Say hello<|assistant|>", add_bos=False))


def usage_sum(usage: dict[str, Any]) -> int:
    return int(usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"])


def check_framing(events: list[Event]) -> None:
    assert [e.name for e in events] == [e.data["type"] for e in events]


def test_stream_events_in_order_with_usage(base_url: str) -> None:
    events = read_stream(f"{base_url}/v1/messages", {"model": "goodput-tiny", "messages": HELLO, "max_tokens": 64})
    check_framing(events)
    names = [e.name for e in events]
    assert names == ["message_start", "ping", "content_block_start", *["content_block_delta"] * len(SCRIPT_TEXT),
                     "content_block_stop", "message_delta", "message_stop"]
    message = events[0].data["message"]
    assert message["id"].startswith("msg_")
    assert {k: message[k] for k in ("type", "role", "content", "model", "stop_reason", "stop_sequence")} == {
        "type": "message", "role": "assistant", "content": [], "model": "goodput-tiny", "stop_reason": None,
        "stop_sequence": None}
    assert message["usage"] == {"input_tokens": PROMPT_TOKENS, "cache_creation_input_tokens": 0,
                                "cache_read_input_tokens": 0, "output_tokens": 0}
    assert events[2].data == {**events[2].data, "index": 0, "content_block": {"type": "text", "text": ""}}
    deltas = [e.data for e in events if e.name == "content_block_delta"]
    assert all(d["index"] == 0 and d["delta"]["type"] == "text_delta" for d in deltas)
    assert "".join(d["delta"]["text"] for d in deltas) == SCRIPT_TEXT
    assert events[-3].data["index"] == 0
    delta = events[-2].data
    assert delta["delta"] == {"stop_reason": "end_turn", "stop_sequence": None}
    assert delta["usage"]["output_tokens"] == OUTPUT_TOKENS
    assert sum(e.data["goodput"]["n"] for e in events) == OUTPUT_TOKENS
    times = [e.data["goodput"]["t"] for e in events]
    assert times == sorted(times)
    assert all(e.data["goodput"]["t"] <= e.client_s for e in events)
    assert delta["goodput"]["decode_s"] is not None and delta["timings"]["predicted_n"] == OUTPUT_TOKENS


def test_cached_prompt_tokens_are_cache_reads(base_url: str) -> None:
    long_prompt = [{"role": "user", "content": "a fairly long question to fill five blocks! " * 2}]
    body = {"messages": long_prompt, "max_tokens": 4}
    post(f"{base_url}/v1/messages", body)
    events = read_stream(f"{base_url}/v1/messages", body)
    usage = events[0].data["message"]["usage"]
    prompt = len(ByteTokenizer().encode(f"<|bos|><|user|>{long_prompt[0]['content']}<|assistant|>", add_bos=False))
    assert prompt == 91  # bos, <|user|>, 88 bytes, <|assistant|>
    assert usage["cache_read_input_tokens"] == 80  # the fake engine's whole 16-token blocks of the earlier prompt
    assert usage_sum(usage) == prompt
    assert events[-2].data["delta"]["stop_reason"] == "max_tokens"


def test_stop_sequences_end_with_stop_sequence(base_url: str) -> None:
    events = read_stream(f"{base_url}/v1/messages", {"messages": HELLO, "max_tokens": 64, "stop_sequences": ["wor"]})
    text = "".join(e.data["delta"]["text"] for e in events if e.name == "content_block_delta")
    assert text == "Hello, "
    assert events[-2].data["delta"] == {"stop_reason": "stop_sequence", "stop_sequence": "wor"}


def test_non_streaming_message(base_url: str) -> None:
    body = post(f"{base_url}/v1/messages", {"messages": HELLO, "max_tokens": 5, "system": "Be brief."}).json()
    assert body["type"] == "message" and body["role"] == "assistant"
    assert body["content"] == [{"type": "text", "text": SCRIPT_TEXT[:5]}]
    assert body["stop_reason"] == "max_tokens" and body["stop_sequence"] is None
    assert body["usage"]["output_tokens"] == 5 == body["goodput"]["n"]
    chat = post(f"{base_url}/v1/chat/completions", {"messages": [{"role": "system", "content": "Be brief."}, *HELLO]})
    assert usage_sum(body["usage"]) == chat.json()["usage"]["prompt_tokens"]


def test_tool_results_render_as_the_chat_conversation(base_url: str) -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "use the tool", "signature": "x"},
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "18 C"}]},
    ]
    body = post(f"{base_url}/v1/messages", {"messages": messages, "max_tokens": 3}).json()
    chat_messages = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "Checking.", "tool_calls": [
            {"id": "toolu_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": "18 C"},
    ]
    chat = post(f"{base_url}/v1/chat/completions", {"messages": chat_messages, "max_tokens": 3}).json()
    assert usage_sum(body["usage"]) == chat["usage"]["prompt_tokens"]


def test_refusals_are_anthropic_errors(base_url: str) -> None:
    url = f"{base_url}/v1/messages"
    cases = [
        ({"messages": HELLO, "stream": True}, 400, "invalid_request_error"),  # no max_tokens
        ({"model": "other", "messages": HELLO, "max_tokens": 4, "stream": True}, 404, "not_found_error"),
        ({"messages": [], "max_tokens": 4}, 400, "invalid_request_error"),
        ({"messages": [{"role": "system", "content": "x"}], "max_tokens": 4}, 400, "invalid_request_error"),
        ({"messages": HELLO, "max_tokens": 4, "tool_choice": {"type": "tool", "name": "f"}}, 400,
         "invalid_request_error"),
        ({"messages": HELLO, "max_tokens": 10**6}, 400, "invalid_request_error"),
    ]
    for body, status, kind in cases:
        response = post(url, body)
        assert response.status_code == status, body
        error = response.json()
        assert set(error) == {"type", "error"} and error["type"] == "error"
        assert error["error"]["type"] == kind and error["error"]["message"], body
    missing = post(url, {"messages": HELLO}).json()["error"]["message"]
    assert "max_tokens" in missing


def test_the_key_as_x_api_key() -> None:
    with serve_in_thread(make_app(FakeEngine(), api_key="sekret")) as url:
        body = {"messages": HELLO, "max_tokens": 2}
        refused = post(f"{url}/v1/messages", body, headers={"x-api-key": "wrong"})
        assert refused.status_code == 401
        assert refused.json()["error"]["type"] == "authentication_error"
        assert post(f"{url}/v1/messages", body).status_code == 401
        assert post(f"{url}/v1/messages", body, headers={"x-api-key": "sekret"}).status_code == 200
        assert post(f"{url}/v1/messages", body, headers={"authorization": "Bearer sekret"}).status_code == 200


def test_an_engine_failure_mid_stream_is_an_error_event() -> None:
    with serve_in_thread(make_app(FakeEngine(fail_at_token=2))) as url:
        response = httpx.post(f"{url}/v1/messages", json={"messages": HELLO, "max_tokens": 9, "stream": True},
                              timeout=30.0)
    events = parse_named(response.text)
    check_framing(events)
    assert events[-1].name == "error"
    assert events[-1].data["error"]["type"] == "api_error" and events[-1].data["error"]["message"]
    assert "message_stop" not in [e.name for e in events]


def test_ignore_eos_makes_exactly_max_tokens_on_both_apis(base_url: str) -> None:
    """goodput run fixes output lengths with vLLM's ignore_eos extension, on every API."""
    messages = post(f"{base_url}/v1/messages", {"messages": HELLO, "max_tokens": 20, "ignore_eos": True}).json()
    assert messages["usage"]["output_tokens"] == 20 and messages["stop_reason"] == "max_tokens"
    responses = post(f"{base_url}/v1/responses", {"input": "x", "max_output_tokens": 20, "ignore_eos": True}).json()
    assert responses["usage"]["output_tokens"] == 20 and responses["status"] == "incomplete"
    floor = post(f"{base_url}/v1/messages", {"messages": HELLO, "max_tokens": 30, "min_tokens": 18}).json()
    assert floor["usage"]["output_tokens"] == 19  # no eos before 18 tokens; the cycled script then ends
