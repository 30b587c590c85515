"""The API registry, the endpoint URL, and the chat and completions modules' own pieces (their probes and the
prompt count read from a non-streamed answer), each against the exact value the docs name."""

from __future__ import annotations

from typing import Any

import pytest

from loadgen.http.api import api_for, api_names, chat, completions, registry
from loadgen.http.api.url import endpoint_url
from loadgen.http.chunks import ChunkAccumulator
from loadgen.http.payload import request_body


def test_an_unknown_name_lists_the_known_ones_in_order() -> None:
    with pytest.raises(ValueError) as caught:
        api_for("embeddings")
    assert str(caught.value) == "unknown endpoint 'embeddings'; expected one of chat, completions, responses, messages"
    assert caught.value.__cause__ is None and caught.value.__suppress_context__ is True


def test_registering_returns_the_api_and_a_name_is_found_again() -> None:
    api = registry.Api("zz_test", "zz", request_body, ChunkAccumulator, chat.probe_body, chat.prompt_tokens)
    try:
        assert registry.register(api) is api
        assert api_for("zz_test") is api and api_names()[-1] == "zz_test"
    finally:
        registry._APIS.pop("zz_test", None)
    assert api_names() == ("chat", "completions", "responses", "messages")


def test_an_apis_defaults() -> None:
    api = registry.Api("x", "x", request_body, ChunkAccumulator, chat.probe_body, chat.prompt_tokens)
    assert dict(api.headers) == {} and api.auth is registry.bearer
    assert api.chat_template is True and api.tools is True
    assert registry.bearer("k1") == {"Authorization": "Bearer k1"}


def test_chat_and_completions_as_registered() -> None:
    api = api_for("chat")
    assert (api.name, api.path, api.build, api.decoder, api.probe_body, api.probe_prompt_tokens) == (
        "chat", "chat/completions", request_body, ChunkAccumulator, chat.probe_body, chat.prompt_tokens)
    assert api.chat_template is True and api.tools is True and dict(api.headers) == {}
    assert api.auth("k") == {"Authorization": "Bearer k"}
    api = api_for("completions")
    assert (api.name, api.path, api.build, api.decoder, api.probe_body, api.probe_prompt_tokens) == (
        "completions", "completions", request_body, ChunkAccumulator, completions.probe_body, chat.prompt_tokens)
    assert api.chat_template is False and api.tools is False and dict(api.headers) == {}
    assert api.auth("k") == {"Authorization": "Bearer k"}


def test_the_probes_ask_for_one_token_without_streaming() -> None:
    messages = [{"role": "user", "content": "hello there"}]
    assert chat.probe_body("m", messages) == {"model": "m", "max_tokens": 1, "stream": False, "messages": messages}
    assert completions.probe_body("m", messages) == {"model": "m", "max_tokens": 1, "stream": False,
                                                     "prompt": "hello there"}


@pytest.mark.parametrize(("answer", "prompt"), [
    ({"usage": {"prompt_tokens": 17, "completion_tokens": 1}}, 17),
    ({"usage": {"prompt_tokens": 0}}, 0),
    ({"usage": {"prompt_tokens": 17.0}}, None),
    ({"usage": {"prompt_tokens": "17"}}, None),
    ({"usage": {"input_tokens": 17}}, None),
    ({"usage": [17]}, None),
    ({}, None),
])
def test_the_prompt_count_of_a_chat_or_completions_answer(answer: dict[str, Any], prompt: int | None) -> None:
    assert chat.prompt_tokens(answer) == prompt


@pytest.mark.parametrize(("base", "endpoint", "url"), [
    ("http://h:8000", "chat", "http://h:8000/v1/chat/completions"),
    ("http://h:8000/", "completions", "http://h:8000/v1/completions"),
    ("http://h:8000/v1", "responses", "http://h:8000/v1/responses"),
    ("https://h/v1/", "messages", "https://h/v1/messages"),
    ("  http://h:8000/prefix  ", "chat", "http://h:8000/prefix/v1/chat/completions"),
    ("http://h/prefix/v1//", "chat", "http://h/prefix/v1/chat/completions"),
    ("http://h/v1x", "chat", "http://h/v1x/v1/chat/completions"),
    ("http://h/xv1", "chat", "http://h/xv1/v1/chat/completions"),
    ("http://h/pathX", "chat", "http://h/pathX/v1/chat/completions"),  # only slashes are trimmed
])
def test_endpoint_urls(base: str, endpoint: str, url: str) -> None:
    assert endpoint_url(base, endpoint) == url


@pytest.mark.parametrize(("base", "message"), [
    ("ftp://h/v1", "base URL must look like http://host:port[/v1], got 'ftp://h/v1'"),
    ("h:8000", "base URL must look like http://host:port[/v1], got 'h:8000'"),
    ("http:///v1", "base URL must look like http://host:port[/v1], got 'http:///v1'"),
    ("http://h/v1?x=1", "base URL must not carry a query or fragment, got 'http://h/v1?x=1'"),
    ("http://h/v1#top", "base URL must not carry a query or fragment, got 'http://h/v1#top'"),
])
def test_bad_base_urls_are_one_line_errors(base: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        endpoint_url(base, "chat")
    assert str(caught.value) == message


def test_an_unknown_endpoint_is_refused_after_the_url_is_checked() -> None:
    with pytest.raises(ValueError, match=r"^unknown endpoint 'nope'"):
        endpoint_url("http://h:1", "nope")
