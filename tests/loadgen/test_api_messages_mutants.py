"""Anthropic's Messages API module without a server: the exact body and headers each work item must produce,
each stream event read as docs/formats.md and the module docstring say (message_start ... message_stop), and
a hand-written stream's chunks, times and tokens counted from the events in the test."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from loadgen.http.api import api_for
from loadgen.http.api import messages as m
from loadgen.http.errors import MidStreamError
from loadgen.types import ClientConfig, WorkItem
from metrics.records.record import RequestRecord


def body(item: WorkItem, **config: Any) -> dict[str, Any]:
    return m.request_body(item, ClientConfig(base_url="http://127.0.0.1:1", model="m", endpoint="messages", **config))


# --- the request body ----------------------------------------------------------------------------------

def test_the_plainest_body_in_full() -> None:
    assert body(WorkItem(prompt="hi")) == {"model": "m", "messages": [{"role": "user", "content": "hi"}],
                                           "max_tokens": 4096, "stream": True}
    assert m.DEFAULT_MAX_TOKENS == 4096


def test_every_option_in_order() -> None:
    item = WorkItem(messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}],
                    max_tokens=0, min_tokens=3, model="other",
                    tools=[{"type": "function", "function": {"name": "f"}}], tool_choice="required")
    got = body(item, ignore_eos=True, temperature=0.0, extra_body={"stream": True, "top_k": 5})
    assert got == {"model": "other", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 0,
                   "stream": True, "system": "be brief", "min_tokens": 3, "ignore_eos": True, "temperature": 0.0,
                   "tools": [{"name": "f", "input_schema": {"type": "object", "properties": {}}}],
                   "tool_choice": {"type": "any"}, "top_k": 5}
    assert list(got) == ["model", "messages", "max_tokens", "stream", "system", "min_tokens", "ignore_eos",
                         "temperature", "tools", "tool_choice", "top_k"]


def test_tools_without_a_choice_send_no_choice_and_the_runs_tools_apply() -> None:
    got = body(WorkItem(prompt="x"), tools=[{"type": "function", "function": {"name": "g"}}])
    assert got["tools"] == [{"name": "g", "input_schema": {"type": "object", "properties": {}}}]
    assert "tool_choice" not in got and "system" not in got


def test_convert_every_role_and_block() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "one"},
        {"role": "developer", "content": [{"type": "text", "text": "two"}, "x", {"text": "!"}]},
        {"role": "system", "content": None},
        {"content": "no role is a user"},
        {"role": "user", "content": [{"type": "text", "text": "see"}, "raw",
                                     {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAA;base64,B"}},
                                     {"type": "image_url", "image_url": "data:image/png,notbase64"},
                                     {"type": "image_url", "image_url": {"url": "https://h/i.png"}}]},
        {"role": "assistant", "content": "calling", "tool_calls": [
            {"id": "c1", "function": {"name": "f", "arguments": '{"a": 1}'}},
            {"function": {"arguments": "not json"}}, {}]},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c2", "function": {"name": "g"}}]},
        {"role": "assistant", "content": [{"type": "text", "text": "t"}], "tool_calls": [{"id": "c3"}]},
        {"role": "assistant", "content": "plain", "tool_calls": []},
        {"role": "tool", "tool_call_id": "c1", "content": 5},
        {"role": "tool", "tool_call_id": "c4", "content": [{"type": "text", "text": "a"}, {"type": "image_url"}, 7]},
        {"role": "tool", "content": None},
        {"role": "other", "content": "x"},
    ]
    system, out = m.convert(messages)
    assert system == "one\n\ntwo!\n\n"
    no_input: dict[str, Any] = {}
    assert out == [
        {"role": "user", "content": "no role is a user"},
        {"role": "user", "content": [
            {"type": "text", "text": "see"}, "raw",
            {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "AAA;base64,B"}},
            {"type": "image", "source": {"type": "url", "url": "data:image/png,notbase64"}},
            {"type": "image", "source": {"type": "url", "url": "https://h/i.png"}}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "calling"},
            {"type": "tool_use", "id": "c1", "name": "f", "input": {"a": 1}},
            {"type": "tool_use", "id": "", "name": "", "input": no_input},
            {"type": "tool_use", "id": "", "name": "", "input": no_input}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c2", "name": "g", "input": no_input}]},
        {"role": "assistant", "content": [{"type": "text", "text": "t"},
                                          {"type": "tool_use", "id": "c3", "name": "", "input": no_input}]},
        {"role": "assistant", "content": "plain"},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "5"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c4", "content": "a"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "", "content": ""}]},
        {"role": "user", "content": "x"},
    ]
    assert m.convert([{"role": "user", "content": "hi"}]) == (None, [{"role": "user", "content": "hi"}])


def test_the_probe_and_its_prompt_count() -> None:
    assert m.probe_body("m", [{"role": "user", "content": "hi"}]) == {
        "model": "m", "max_tokens": 1, "stream": False, "messages": [{"role": "user", "content": "hi"}]}
    assert m.probe_body("m", [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]) == {
        "model": "m", "max_tokens": 1, "stream": False, "messages": [{"role": "user", "content": "hi"}],
        "system": "s"}
    assert m.prompt_tokens({"usage": {"input_tokens": 3, "cache_read_input_tokens": 100,
                                      "cache_creation_input_tokens": 20, "output_tokens": 1}}) == 123
    assert m.prompt_tokens({"usage": {"input_tokens": 3, "cache_read_input_tokens": 1.5}}) == 3
    assert m.prompt_tokens({"usage": {"cache_read_input_tokens": 100}}) is None
    assert m.prompt_tokens({"usage": {"input_tokens": 3.0}}) is None
    assert m.prompt_tokens({"usage": 3}) is None and m.prompt_tokens({}) is None


def test_the_registered_api_and_its_headers() -> None:
    api = api_for("messages")
    assert api is m.API
    assert (api.name, api.path, api.build, api.decoder, api.probe_body, api.probe_prompt_tokens) == (
        "messages", "messages", m.request_body, m.decoder, m.probe_body, m.prompt_tokens)
    assert dict(api.headers) == {"anthropic-version": "2023-06-01"}
    assert api.auth("sk") == {"x-api-key": "sk", "Authorization": "Bearer sk"}
    assert api.chat_template is True and api.tools is True
    assert m.decoder().cut_off() == "stream ended before message_stop"


# --- each event -----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("event", "decoded"), [
    ({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}}, (("text", "Hi"),)),
    ({"type": "content_block_delta", "delta": {"type": "thinking_delta", "thinking": "hm"}}, (("reasoning", "hm"),)),
    ({"type": "content_block_delta", "delta": {"type": "input_json_delta", "partial_json": "{"}},
     (("tool_args", "{"),)),
    ({"type": "content_block_delta", "delta": {"type": "signature_delta", "signature": "s"}}, ()),
    ({"type": "message_stop"}, (("end", None),)),
    ({"type": "ping"}, ()),
    ({"type": "error", "error": {"type": "overloaded_error"}}, (("error", {"type": "overloaded_error"}),)),
    ({"type": "error"}, (("error", {"type": "error"}),)),
    ({"type": "content_block_stop", "index": 0}, ()),
    ({"index": 0}, ()),
])
def test_one_event(event: dict[str, Any], decoded: tuple[Any, ...]) -> None:
    assert m.MessagesDecoder()(event) == decoded


@pytest.mark.parametrize(("block", "decoded"), [
    ({"type": "tool_use", "id": "t1", "name": "f", "input": {}}, (("tool_start", ("t1", "f")),)),
    ({"type": "server_tool_use", "id": "t2", "name": "web"}, (("tool_start", ("t2", "web")),)),
    ({"type": "text", "text": ""}, ()),
    ({"type": "text", "text": "Hi"}, (("text", "Hi"),)),
    ({"type": "text"}, ()),
    ({"type": "thinking", "thinking": ""}, ()),
    ({"type": "thinking", "thinking": "hm"}, (("reasoning", "hm"),)),
    ({"type": "redacted_thinking", "data": "x"}, ()),
])
def test_a_block_start_and_its_stop(block: dict[str, Any], decoded: tuple[Any, ...]) -> None:
    decode = m.MessagesDecoder()
    assert decode({"type": "content_block_start", "index": 3, "content_block": block}) == decoded
    assert decode.blocks == {3: block["type"]}
    closes = block["type"] in ("tool_use", "server_tool_use")
    assert decode({"type": "content_block_stop", "index": 3}) == ((("tool_done", None),) if closes else ())
    assert decode({"type": "content_block_stop", "index": 4}) == ()  # another block's stop


def test_a_missing_block_or_delta_is_a_shape_fault() -> None:
    with pytest.raises(KeyError):
        m.MessagesDecoder()({"type": "content_block_start", "index": 0})
    with pytest.raises(KeyError):
        m.MessagesDecoder()({"type": "content_block_delta", "delta": {"type": "text_delta"}})
    with pytest.raises(KeyError):
        m.MessagesDecoder()({"type": "message_start"})


def test_the_usage_across_message_start_and_message_delta() -> None:
    decode = m.MessagesDecoder()
    start = {"type": "message_start", "message": {"usage": {
        "input_tokens": 3, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 20, "output_tokens": 1}}}
    assert decode(start) == (("usage", {"prompt_tokens": 123, "prompt_tokens_details": {"cached_tokens": 100}}),)
    assert decode.inputs == {"input_tokens": 3, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 20}
    end = {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}}
    assert decode(end) == (("usage", {"prompt_tokens": 123, "prompt_tokens_details": {"cached_tokens": 100},
                                      "completion_tokens": 9}), ("finish", "stop"))
    later = {"type": "message_delta", "delta": {}, "usage": {"input_tokens": 4, "output_tokens": 9.5}}
    assert decode(later) == (("usage", {"prompt_tokens": 124, "prompt_tokens_details": {"cached_tokens": 100}}),)


@pytest.mark.parametrize(("usage", "decoded"), [
    (None, ()),
    ([1], ()),
    ({}, ()),
    ({"output_tokens": 5}, (("usage", {"completion_tokens": 5}),)),
    ({"input_tokens": 7, "cache_read_input_tokens": "9"}, (("usage", {"prompt_tokens": 7}),)),
    ({"cache_read_input_tokens": 0}, (("usage", {"prompt_tokens": 0, "prompt_tokens_details": {"cached_tokens": 0}}),)),
])
def test_a_message_deltas_usage(usage: Any, decoded: tuple[Any, ...]) -> None:
    assert m.MessagesDecoder()({"type": "message_delta", "delta": {}, "usage": usage}) == decoded


def test_message_starts_output_count_is_not_the_answers() -> None:
    start = {"type": "message_start", "message": {"usage": {"output_tokens": 1}}}
    assert m.MessagesDecoder()(start) == ()
    assert m.MessagesDecoder()({"type": "message_start", "message": {}}) == ()


@pytest.mark.parametrize(("reason", "finish"), [
    ("end_turn", "stop"), ("stop_sequence", "stop"), ("max_tokens", "length"), ("tool_use", "tool_calls"),
    ("refusal", "refusal"), ("pause_turn", "pause_turn"),
])
def test_stop_reasons_in_chats_words(reason: str, finish: str) -> None:
    assert m.MessagesDecoder()({"type": "message_delta", "delta": {"stop_reason": reason}}) == (("finish", finish),)


def test_a_message_delta_without_a_delta_or_reason_is_no_finish() -> None:
    assert m.MessagesDecoder()({"type": "message_delta"}) == ()
    assert m.MessagesDecoder()({"type": "message_delta", "delta": {"stop_reason": None}}) == ()


# --- a whole stream ---------------------------------------------------------------------------------------

def run(*events: dict[str, Any]) -> tuple[RequestRecord, bool]:
    acc = m.decoder()
    ended = False
    for i, event in enumerate(events):
        ended = acc.feed(orjson.dumps(event), 1_000 * (i + 1))
    record = RequestRecord(id=0, intended_ns=0, sent_ns=0)
    acc.fill(record)
    return record, ended


def test_thinking_then_a_tool_call_with_cache_reads() -> None:
    record, ended = run(
        {"type": "message_start", "message": {"usage": {"input_tokens": 2, "cache_read_input_tokens": 8}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "ab"}},  # 3000
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "s"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t", "name": "f"}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{}"}},
        {"type": "ping"},
        {"type": "content_block_stop", "index": 1},  # 9000: the call's arguments are complete
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 6}},
        {"type": "message_stop"})
    assert ended is True and record.finish_reason == "tool_calls"
    assert record.chunk_ns == [3000, 6000, 7000]
    assert (record.reasoning_ns, record.answer_ns) == (3000, 6000)
    assert (record.tool_calls, record.tool_call_ns, record.tool_call_done_ns) == (1, 6000, 9000)
    assert (record.prompt_tokens, record.cached_tokens, record.output_tokens) == (10, 8, 6)


def test_an_error_event_raises_with_the_servers_words() -> None:
    with pytest.raises(MidStreamError, match=r"^overloaded_error: Overloaded$"):
        run({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
