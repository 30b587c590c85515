"""What each API's request body says for tools, tool choices, images and a conversation's history, and
the tool-list checks behind `--tools`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loadgen.http.api import api_for, api_names
from loadgen.http.api.url import endpoint_url
from loadgen.http.payload import encode_body
from loadgen.tools import check_tools, parse_tool_choice, read_tools
from loadgen.types import ClientConfig, Endpoint, WorkItem

WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
                                            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}
CLOCK = {"type": "function", "function": {"name": "now"}}
PNG = "data:image/png;base64,iVBORw0KGgo="


def build(endpoint: str, item: WorkItem) -> dict[str, Any]:
    config = ClientConfig(base_url="http://127.0.0.1:1", model="m", endpoint=endpoint)  # type: ignore[arg-type]
    return dict(json.loads(encode_body(item, config, build=api_for(endpoint).build)))


def test_the_registry_names_every_api_with_its_path() -> None:
    assert api_names() == ("chat", "completions", "responses", "messages")
    assert [endpoint_url("http://h:8/v1/", name).removeprefix("http://h:8") for name in api_names()] == [
        "/v1/chat/completions", "/v1/completions", "/v1/responses", "/v1/messages"]
    with pytest.raises(ValueError, match="unknown endpoint 'embeddings'"):
        api_for("embeddings")


def test_tools_in_each_apis_form() -> None:
    item = WorkItem(prompt="weather?", max_tokens=5, tools=[WEATHER, CLOCK],
                    tool_choice={"type": "function", "name": "get_weather"})
    chat = build("chat", item)
    assert chat["tools"] == [WEATHER, CLOCK]
    assert chat["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    responses = build("responses", item)
    assert responses["tools"] == [{"type": "function", "name": "get_weather", "description": "Weather of a city",
                                   "parameters": WEATHER["function"]["parameters"]},  # type: ignore[index]
                                  {"type": "function", "name": "now"}]
    assert responses["tool_choice"] == {"type": "function", "name": "get_weather"}
    messages = build("messages", item)
    assert messages["tools"] == [{"name": "get_weather", "description": "Weather of a city",
                                  "input_schema": WEATHER["function"]["parameters"]},  # type: ignore[index]
                                 {"name": "now", "input_schema": {"type": "object", "properties": {}}}]
    assert messages["tool_choice"] == {"type": "tool", "name": "get_weather"}


@pytest.mark.parametrize(("choice", "chat", "responses", "messages"), [
    ("auto", "auto", "auto", {"type": "auto"}),
    ("required", "required", "required", {"type": "any"}),
    ("none", "none", "none", {"type": "none"}),
])
def test_tool_choice_words(choice: str, chat: Any, responses: Any, messages: Any) -> None:
    item = WorkItem(prompt="x", tools=[CLOCK], tool_choice=choice)
    assert [build(e, item)["tool_choice"] for e in ("chat", "responses", "messages")] == [chat, responses, messages]


def test_completions_take_no_tools() -> None:
    with pytest.raises(ValueError, match="the completions API takes no tools"):
        build("completions", WorkItem(prompt="x", tools=[CLOCK]))


def test_without_tools_the_chat_body_is_todays() -> None:
    config = ClientConfig(base_url="http://127.0.0.1:1", model="m")
    assert encode_body(WorkItem(prompt="hi", max_tokens=3), config) == (
        b'{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,'
        b'"stream_options":{"include_usage":true,"continuous_usage_stats":true},"max_tokens":3}')


def test_images_become_input_image_and_image_blocks() -> None:
    parts = [{"type": "text", "text": "what is this?"}, {"type": "image_url", "image_url": {"url": PNG}},
             {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}}]
    item = WorkItem(messages=[{"role": "user", "content": parts}], max_tokens=5, images=2)
    assert build("responses", item)["input"] == [{"role": "user", "content": [
        {"type": "input_text", "text": "what is this?"}, {"type": "input_image", "image_url": PNG},
        {"type": "input_image", "image_url": "https://example.com/cat.jpg"}]}]
    assert build("messages", item)["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "what is this?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}}]}]
    assert build("chat", item)["messages"][0]["content"] == parts  # chat sends its own parts unchanged


def test_a_tool_turn_in_the_history() -> None:
    history: list[dict[str, Any]] = [{"role": "user", "content": "weather in Paris?"},
               {"role": "assistant", "content": None, "tool_calls": [
                   {"id": "call_1", "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
               {"role": "tool", "tool_call_id": "call_1", "content": "18 C, sunny"}]
    item = WorkItem(messages=history, max_tokens=5)
    assert build("responses", item)["input"] == [
        {"role": "user", "content": "weather in Paris?"},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city": "Paris"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "18 C, sunny"}]
    assert build("messages", item)["messages"] == [
        {"role": "user", "content": "weather in Paris?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "call_1", "name": "get_weather",
                                           "input": {"city": "Paris"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "18 C, sunny"}]}]


def test_extra_body_wins_on_every_api() -> None:
    endpoint: Endpoint
    for endpoint in ("responses", "messages"):
        config = ClientConfig(base_url="http://127.0.0.1:1", model="m", endpoint=endpoint,
                              extra_body={"temperature": 0.5, "stream": True, "metadata": {"a": 1}})
        body = json.loads(encode_body(WorkItem(prompt="x"), config, build=api_for(endpoint).build))
        assert body["temperature"] == 0.5 and body["metadata"] == {"a": 1}


@pytest.mark.parametrize(("tools", "message"), [
    ({}, "a non-empty JSON array"),
    ([], "a non-empty JSON array"),
    ([{"type": "function"}], 'tool 0 is not {"type": "function"'),
    ([{"type": "function", "function": {"description": "x"}}], "tool 0 has no function name"),
    ([CLOCK, CLOCK], "tool name 'now' appears twice"),
    ([{"type": "function", "function": {"name": "f", "parameters": []}}], "parameters must be a JSON object"),
])
def test_bad_tool_lists_are_one_line_errors(tools: Any, message: str) -> None:
    with pytest.raises(ValueError, match="^where: .*" + message.replace("{", r"\{").replace("(", r"\(")):
        check_tools(tools, "where")


def test_reading_a_tool_file(tmp_path: Path) -> None:
    good = tmp_path / "tools.json"
    good.write_text(json.dumps([WEATHER]))
    assert read_tools(str(good)) == [WEATHER]
    bad = tmp_path / "bad.json"
    bad.write_text("[{")
    with pytest.raises(ValueError, match=r"--tools .*bad.json: not JSON"):
        read_tools(str(bad))
    with pytest.raises(ValueError, match="cannot read it"):
        read_tools(str(tmp_path / "missing.json"))


def test_tool_choice_by_name() -> None:
    assert parse_tool_choice("get_weather", [WEATHER]) == {"type": "function", "name": "get_weather"}
    assert parse_tool_choice("required", [WEATHER]) == "required"
    with pytest.raises(ValueError, match="no tool of that name"):
        parse_tool_choice("nope", [WEATHER])
    with pytest.raises(ValueError, match="needs --tools"):
        parse_tool_choice("auto", None)
