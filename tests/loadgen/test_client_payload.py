"""Request bodies, URLs and the error taxonomy."""

from __future__ import annotations

import orjson
import pytest

import loadgen.http.errors as errors
from loadgen.http.api.url import endpoint_url
from loadgen.http.payload import encode_body, merge_body, request_body
from loadgen.types import ClientConfig, WorkItem


@pytest.mark.parametrize(
    "base",
    ["http://h:8000", "http://h:8000/", "http://h:8000/v1", "http://h:8000/v1/", " http://h:8000/v1 "],
)
def test_endpoint_url_with_or_without_v1(base: str) -> None:
    assert endpoint_url(base, "chat") == "http://h:8000/v1/chat/completions"
    assert endpoint_url(base, "completions") == "http://h:8000/v1/completions"


def test_endpoint_url_keeps_a_path_prefix() -> None:
    assert endpoint_url("https://gw.example/llm", "chat") == "https://gw.example/llm/v1/chat/completions"
    assert endpoint_url("https://gw.example/llm/v1", "chat") == "https://gw.example/llm/v1/chat/completions"


@pytest.mark.parametrize("bad", ["h:8000", "ftp://h", "http://", "http://h/v1?key=1"])
def test_endpoint_url_rejects_bad_bases(bad: str) -> None:
    with pytest.raises(ValueError, match="base URL"):
        endpoint_url(bad, "chat")


def test_chat_body() -> None:
    config = ClientConfig(base_url="http://h", model="m", temperature=0.0, ignore_eos=True)
    item = WorkItem(messages=[{"role": "user", "content": "hi"}], max_tokens=32, min_tokens=32)
    assert request_body(item, config) == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
        "stream_options": {"include_usage": True, "continuous_usage_stats": True},
        "max_tokens": 32,
        "min_tokens": 32,
        "ignore_eos": True,
        "temperature": 0.0,
    }


def test_completions_body_and_optional_fields_absent() -> None:
    config = ClientConfig(
        base_url="http://h",
        model="m",
        endpoint="completions",
        include_usage=False,
        continuous_usage_stats=False,
    )
    body = request_body(
        WorkItem(
            messages=[
                {"role": "system", "content": "a"},
                {"role": "user", "content": [{"type": "text", "text": "b"}]},
            ]
        ),
        config,
    )
    assert body == {"model": "m", "prompt": "a\nb", "stream": True}


def test_extra_body_wins_and_merges_nested_objects() -> None:
    config = ClientConfig(
        base_url="http://h",
        model="m",
        extra_body={"stream_options": {"continuous_usage_stats": False}, "top_k": 5, "stream": True},
    )
    body = orjson.loads(encode_body(WorkItem(prompt="p"), config))
    assert body["stream_options"] == {"include_usage": True, "continuous_usage_stats": False}
    assert body["top_k"] == 5 and body["messages"] == [{"role": "user", "content": "p"}]
    assert merge_body({"a": {"b": 1}}, {"a": 2}) == {"a": 2}


def test_empty_work_item_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="neither"):
        request_body(WorkItem(), ClientConfig(base_url="http://h", model="m"))


def test_error_tree_docstring_names_every_leaf_and_kinds_are_unique() -> None:
    doc = errors.__doc__ or ""
    kinds = [c.kind for c in errors.LEAF_CLASSES]
    assert len(kinds) == len(set(kinds)) == len(errors.ERROR_KINDS)
    for cls in errors.LEAF_CLASSES:
        assert cls.__name__ in doc and cls.kind in doc, cls
        assert cls.kind.isidentifier() and cls.kind == cls.kind.lower()
    timeouts = {"timeout_connect", "timeout_first_byte", "timeout_between_chunks", "timeout_total"}
    assert timeouts == errors.TIMEOUT_KINDS
    assert errors.ClientCancelled.status == "cancelled" and errors.StreamCutOff.status == "error"


def test_error_messages_are_bounded_and_single_line() -> None:
    exc = errors.HTTPStatusFailed(500, "line one\n" + "x" * 1000)
    assert exc.status_code == 500 and len(exc.message) <= errors.MAX_MESSAGE_CHARS and "\n" not in exc.message
