"""A dataset's chat messages are checked once, where the file is read (loadgen/workload/rows.py): a message
a chat server would refuse, or that an API's conversion could not read, is refused with its line and its
number; a valid one is kept exactly as the file gives it (keys, order, extra keys)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loadgen.workload.conversations import load_jsonl_conversations
from loadgen.workload.counters import make_counter
from loadgen.workload.sources import load_jsonl

COUNTER = make_counter("words")[1]


def jsonl(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


GOOD: dict[str, Any] = {"role": "user", "content": "hi"}


@pytest.mark.parametrize(("message", "reason"), [
    ({"role": 5, "content": "x"}, "'role' must be a string"),
    ({"role": "user", "content": 42}, "'content' must be a string, null or a list of content parts"),
    ({"role": "user", "content": {"text": "x"}}, "'content' must be a string, null or a list of content parts"),
    ({"role": "user", "content": ["raw"]}, 'each content part must be an object with a string "type"'),
    ({"role": "user", "content": [{"text": "no type"}]}, 'each content part must be an object with a string "type"'),
    ({"role": "user", "content": [{"type": "text", "text": 3}]}, "a part's 'text' must be a string"),
    ({"role": "user", "content": [{"type": "image_url"}]}, "an image_url part needs image_url.url, a path or URL"),
    ({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://h/i.png", "detail": 1}}]},
     "an image_url part's 'detail' must be a string"),
    ({"role": "assistant", "content": None, "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {}}}]},
     "'tool_calls' must be a list of"),
    ({"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]},
     "'tool_calls' must be a list of"),
    ({"role": "assistant", "content": None, "tool_calls": {"id": "c"}}, "'tool_calls' must be a list of"),
    ({"role": "tool", "tool_call_id": 7, "content": "r"}, "'tool_call_id' must be a string"),
])
def test_a_message_a_server_would_refuse_is_refused_with_its_line_and_number(
        tmp_path: Path, message: dict[str, Any], reason: str) -> None:
    path = jsonl(tmp_path / "d.jsonl", [{"messages": [GOOD]}, {"messages": [GOOD, message]}])
    with pytest.raises(ValueError, match=rf"d\.jsonl:2: message 2: {reason}"):
        load_jsonl(path, COUNTER, {})
    conversation = {"messages": [GOOD, {"role": "assistant", "content": "a"}, message]}
    with pytest.raises(ValueError, match=rf"d\.jsonl:1: message 3: {reason}"):
        load_jsonl_conversations(jsonl(tmp_path / "d.jsonl", [conversation]), COUNTER, {})


def test_a_row_that_is_no_list_of_messages_keeps_its_message(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "d.jsonl", [{"messages": [{"content": "no role"}]}])
    with pytest.raises(ValueError, match=r"d\.jsonl:1: needs 'messages' \(a non-empty list of \{role, content\}\) or"):
        load_jsonl(path, COUNTER, {})


def test_valid_messages_are_kept_as_the_file_gives_them(tmp_path: Path) -> None:
    messages = [
        {"role": "system", "content": "s", "name": "setup"},
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "input_audio", "input_audio": {}}]},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "r"},
        {"role": "user", "content": "go on"},
    ]
    (item,) = load_jsonl(jsonl(tmp_path / "d.jsonl", [{"messages": messages}]), COUNTER, {})
    assert json.dumps(item.messages) == json.dumps(messages)
