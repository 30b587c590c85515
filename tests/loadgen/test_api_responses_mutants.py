"""The Responses API module without a server: the exact body each work item must produce, each stream event
read as docs/formats.md and the module docstring say (OpenAI's Responses SSE events, vLLM's extensions),
and a hand-written stream's chunks, times and tokens counted from the events in the test."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from loadgen.http.api import api_for
from loadgen.http.api import responses as r
from loadgen.http.errors import MidStreamError
from loadgen.types import ClientConfig, WorkItem
from metrics.records.record import RequestRecord

CONFIG = ClientConfig(base_url="http://127.0.0.1:1", model="m", endpoint="responses")


def body(item: WorkItem, **config: Any) -> dict[str, Any]:
    return r.request_body(item, ClientConfig(base_url="http://127.0.0.1:1", model="m", endpoint="responses",
                                             **config))


# --- the request body ----------------------------------------------------------------------------------

def test_the_plainest_body_in_full() -> None:
    assert body(WorkItem(prompt="hi")) == {"model": "m", "input": [{"role": "user", "content": "hi"}],
                                           "stream": True, "store": False}


def test_every_option_in_order() -> None:
    item = WorkItem(prompt="hi", max_tokens=9, min_tokens=3, model="other",
                    tools=[{"type": "function", "function": {"name": "f"}}], tool_choice="required")
    got = body(item, ignore_eos=True, temperature=0.0, extra_body={"store": True, "top_p": 0.5})
    assert got == {"model": "other", "input": [{"role": "user", "content": "hi"}], "stream": True, "store": True,
                   "max_output_tokens": 9, "min_tokens": 3, "ignore_eos": True, "temperature": 0.0,
                   "tools": [{"type": "function", "name": "f"}], "tool_choice": "required", "top_p": 0.5}
    assert list(got) == ["model", "input", "stream", "store", "max_output_tokens", "min_tokens", "ignore_eos",
                         "temperature", "tools", "tool_choice", "top_p"]


def test_max_tokens_zero_is_sent_and_tools_without_a_choice_send_no_choice() -> None:
    got = body(WorkItem(prompt="hi", max_tokens=0), tools=[{"type": "function", "function": {"name": "g"}}])
    assert got["max_output_tokens"] == 0
    assert got["tools"] == [{"type": "function", "name": "g"}] and "tool_choice" not in got


def test_the_runs_tools_and_choice_when_the_item_has_none() -> None:
    got = body(WorkItem(prompt="x"), tools=[{"type": "function", "function": {"name": "g"}}], tool_choice="auto")
    assert got["tools"] == [{"type": "function", "name": "g"}] and got["tool_choice"] == "auto"


def test_input_items_for_every_role_and_part() -> None:
    messages: list[dict[str, Any]] = [
        {"content": "no role is a user"},
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "see"}, {"type": "text"}, "raw", {"type": "other"},
                                     {"type": "image_url", "image_url": {"url": "u1", "detail": "low"}},
                                     {"type": "image_url", "image_url": "u2"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "seen"}]},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{}"}},
                                                            {}]},
        {"role": "assistant", "content": None},
        {"role": "tool", "tool_call_id": "c1",
         "content": [{"type": "text", "text": "1"}, "x", {"type": "image_url"}, {"text": "2"}]},
        {"role": "tool", "content": None},
        {"role": "tool", "content": 5},
    ]
    assert r.input_items(messages) == [
        {"role": "user", "content": "no role is a user"},
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "input_text", "text": "see"}, {"type": "input_text", "text": ""},
                                     "raw", {"type": "other"},
                                     {"type": "input_image", "image_url": "u1", "detail": "low"},
                                     {"type": "input_image", "image_url": "u2"}]},
        {"role": "assistant", "content": [{"type": "output_text", "text": "seen"}]},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "", "name": "", "arguments": ""},
        {"type": "function_call_output", "call_id": "c1", "output": "12"},
        {"type": "function_call_output", "call_id": "", "output": ""},
        {"type": "function_call_output", "call_id": "", "output": "5"},
    ]


def test_the_probe_and_its_prompt_count() -> None:
    assert r.probe_body("m", [{"role": "user", "content": "hi"}]) == {
        "model": "m", "max_output_tokens": 1, "stream": False, "store": False,
        "input": [{"role": "user", "content": "hi"}]}
    assert r.prompt_tokens({"usage": {"input_tokens": 12, "output_tokens": 1}}) == 12
    assert r.prompt_tokens({"usage": {"input_tokens": 12.0}}) is None
    assert r.prompt_tokens({"usage": {"prompt_tokens": 12}}) is None
    assert r.prompt_tokens({"usage": [12]}) is None
    assert r.prompt_tokens({}) is None


def test_the_registered_api() -> None:
    api = api_for("responses")
    assert api is r.API
    assert (api.name, api.path, api.build, api.decoder, api.probe_body, api.probe_prompt_tokens) == (
        "responses", "responses", r.request_body, r.decoder, r.probe_body, r.prompt_tokens)
    assert dict(api.headers) == {} and api.auth("k") == {"Authorization": "Bearer k"}
    assert api.chat_template is True and api.tools is True
    acc = r.decoder()
    assert acc.cut_off() == "stream ended before response.completed, response.incomplete or response.failed"


# --- each event -----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("event", "decoded"), [
    ({"type": "response.output_text.delta", "delta": "Hi"}, (("text", "Hi"),)),
    ({"type": "response.refusal.delta", "delta": "No"}, (("text", "No"),)),
    ({"type": "response.reasoning_text.delta", "delta": "hm"}, (("reasoning", "hm"),)),
    ({"type": "response.reasoning_summary_text.delta", "delta": "so"}, (("reasoning", "so"),)),
    ({"type": "response.function_call_arguments.delta", "delta": "{"}, (("tool_args", "{"),)),
    ({"type": "response.function_call_arguments.done", "arguments": "{}"}, (("tool_done", None),)),
    ({"type": "response.output_item.done", "item": {"type": "function_call"}}, (("tool_done", None),)),
    ({"type": "response.output_item.added", "item": {"type": "message"}}, ()),
    ({"type": "response.output_item.done", "item": {"type": "reasoning"}}, ()),
    ({"type": "response.output_item.added", "item": "function_call"}, ()),
    ({"type": "response.output_item.added"}, ()),
    ({"type": "response.output_text.done", "text": "Hi"}, ()),
    ({"type": "response.created", "response": {"status": "in_progress"}}, ()),
    ({"type": "error", "error": {"code": "x"}}, (("error", {"code": "x"}),)),
    ({"type": "error", "message": "m"}, (("error", {"type": "error", "message": "m"}),)),
    ({"delta": "no type"}, ()),
])
def test_one_event(event: dict[str, Any], decoded: tuple[Any, ...]) -> None:
    assert r.ResponsesDecoder()(event) == decoded


def test_a_function_call_item_starts_a_call_with_its_id_and_name_and_any_arguments() -> None:
    decode = r.ResponsesDecoder()
    assert decode.called is False
    added = {"type": "response.output_item.added",
             "item": {"type": "function_call", "call_id": "c1", "name": "get", "arguments": ""}}
    assert decode(added) == (("tool_start", ("c1", "get")),)
    assert decode.called is True
    with_args = {"type": "response.output_item.added",
                 "item": {"type": "function_call", "call_id": "c2", "name": "put", "arguments": '{"a": 1}'}}
    assert decode(with_args) == (("tool_start", ("c2", "put")), ("tool_args", '{"a": 1}'))
    assert r.ResponsesDecoder()({"type": "response.output_item.added", "item": {"type": "function_call"}}) == (
        ("tool_start", (None, None)),)


def test_a_missing_delta_is_a_shape_fault() -> None:
    with pytest.raises(KeyError):
        r.ResponsesDecoder()({"type": "response.output_text.delta"})


USAGE = {"input_tokens": 21, "input_tokens_details": {"cached_tokens": 16}, "output_tokens": 9,
         "output_tokens_details": {"reasoning_tokens": 4}, "total_tokens": 30}
CHAT_USAGE = {"prompt_tokens": 21, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 16},
              "completion_tokens_details": {"reasoning_tokens": 4}}


@pytest.mark.parametrize(("usage", "chat"), [
    (USAGE, CHAT_USAGE),
    ({}, {}),
    ({"input_tokens": 0}, {"prompt_tokens": 0}),
    ({"output_tokens": 3, "input_tokens_details": {}, "output_tokens_details": None}, {"completion_tokens": 3}),
    ({"input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}},
     {"prompt_tokens_details": {"cached_tokens": 0}, "completion_tokens_details": {"reasoning_tokens": 0}}),
    ({"input_tokens_details": [1], "output_tokens_details": "x"}, {}),
])
def test_usage_in_chats_names(usage: dict[str, Any], chat: dict[str, Any]) -> None:
    assert r.chat_usage(usage) == chat


@pytest.mark.parametrize(("called", "event", "decoded"), [
    (False, {"type": "response.completed", "response": {"status": "completed", "usage": USAGE}},
     (("usage", CHAT_USAGE), ("finish", "stop"), ("end", None))),
    (True, {"type": "response.completed", "response": {"status": "completed"}},
     (("finish", "tool_calls"), ("end", None))),
    (False, {"type": "response.completed"}, (("finish", "stop"), ("end", None))),
    (False, {"type": "response.completed", "response": "done"}, (("finish", "stop"), ("end", None))),
    (False, {"type": "response.completed", "response": {"usage": [1]}}, (("finish", "stop"), ("end", None))),
    (False, {"type": "response.incomplete",
             "response": {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}},
     (("finish", "length"), ("end", None))),
    (False, {"type": "response.incomplete", "response": {"incomplete_details": {"reason": "content_filter"}}},
     (("finish", "content_filter"), ("end", None))),
    (False, {"type": "response.incomplete", "response": {"incomplete_details": "max_output_tokens"}},
     (("finish", "incomplete"), ("end", None))),
    (True, {"type": "response.completed", "response": {"status": "incomplete", "incomplete_details": {}}},
     (("finish", "incomplete"), ("end", None))),
    (False, {"type": "response.failed", "response": {"status": "failed", "error": {"message": "boom"},
                                                     "usage": {"output_tokens": 2}}},
     (("usage", {"completion_tokens": 2}), ("error", {"message": "boom"}), ("end", None))),
    (False, {"type": "response.failed", "response": {}}, (("error", "the response ended failed"), ("end", None))),
    (False, {"type": "response.completed", "response": {"status": "cancelled", "error": None}},
     (("error", "the response ended cancelled"), ("end", None))),
    (False, {"type": "response.incomplete", "response": {"status": "failed", "error": {}}},
     (("error", "the response ended failed"), ("end", None))),
])
def test_each_terminal_event(called: bool, event: dict[str, Any], decoded: tuple[Any, ...]) -> None:
    decode = r.ResponsesDecoder()
    decode.called = called
    assert decode(event) == decoded


# --- a whole stream ---------------------------------------------------------------------------------------

def run(*events: dict[str, Any]) -> tuple[RequestRecord, bool]:
    acc = r.decoder()
    ended = False
    for i, event in enumerate(events):
        ended = acc.feed(orjson.dumps(event), 1_000 * (i + 1))
    record = RequestRecord(id=0, intended_ns=0, sent_ns=0)
    acc.fill(record)
    return record, ended


def test_reasoning_a_call_and_its_usage_in_one_stream() -> None:
    record, ended = run(
        {"type": "response.created", "response": {"status": "in_progress"}},  # 1000: nothing
        {"type": "response.reasoning_text.delta", "delta": "ab"},  # 2000: reasoning, 2 chars
        {"type": "response.reasoning_text.delta", "delta": "cdef"},  # 3000: reasoning, 4 chars
        {"type": "response.output_item.added", "item": {"type": "function_call", "call_id": "c", "name": "f"}},
        {"type": "response.function_call_arguments.delta", "delta": "{}"},  # 5000
        {"type": "response.function_call_arguments.done", "arguments": "{}"},  # 6000: the call is complete
        {"type": "response.output_item.done", "item": {"type": "function_call"}},  # 7000: too late to count
        {"type": "response.completed", "response": {"status": "completed", "usage": {
            "input_tokens": 10, "output_tokens": 8, "output_tokens_details": {"reasoning_tokens": 5}}}})
    assert ended is True and record.finish_reason == "tool_calls"
    assert record.chunk_ns == [2000, 3000, 4000, 5000]
    assert (record.reasoning_ns, record.answer_ns) == (2000, 4000)
    assert (record.tool_calls, record.tool_call_ns, record.tool_call_done_ns) == (1, 4000, 6000)
    assert (record.prompt_tokens, record.output_tokens) == (10, 8)
    assert (record.reasoning_tokens, record.reasoning_tokens_source) == (5, "usage")


def test_a_call_begun_with_its_arguments_is_one_chunk_and_the_servers_stamps_still_count() -> None:
    # Two content events, each stamped by the server: 3 reasoning tokens, then a call whose item already
    # holds its arguments (4 tokens). One event is one chunk, so both stamps line up with the chunks.
    record, ended = run(
        {"type": "response.reasoning_text.delta", "delta": "hmm", "goodput": {"t": 0.25, "n": 3}},
        {"type": "response.output_item.added", "goodput": {"t": 0.5, "n": 4},
         "item": {"type": "function_call", "call_id": "c", "name": "f", "arguments": '{"a": 1}'}},
        {"type": "response.output_item.done", "item": {"type": "function_call"}},
        {"type": "response.completed", "response": {"status": "completed", "usage": {"output_tokens": 7}}})
    assert ended is True and record.finish_reason == "tool_calls"
    assert record.chunk_ns == [1000, 2000]
    assert (record.token_source, record.chunk_tokens, record.server_chunk_s) == ("server", [3, 4], [0.25, 0.5])
    assert (record.tool_calls, record.tool_call_ns, record.tool_call_done_ns) == (1, 2000, 3000)
    assert (record.reasoning_tokens, record.reasoning_tokens_source) == (3, "server")


def test_a_failed_response_raises_with_the_servers_message() -> None:
    with pytest.raises(MidStreamError, match=r"^server_error: engine died$"):
        run({"type": "response.output_text.delta", "delta": "a"},
            {"type": "response.failed", "response": {"status": "failed",
                                                     "error": {"code": "server_error", "message": "engine died"}}})
