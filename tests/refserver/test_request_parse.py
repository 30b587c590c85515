"""A request body is read once, at the edge, into a request the rest of the server cannot change."""

from __future__ import annotations

import dataclasses

import pytest

from refserver.api.errors import APIError
from refserver.api.json_object import JSONObject
from refserver.api.messages_protocol import parse_messages_request
from refserver.api.protocol import GenerationRequest, parse_request
from refserver.api.responses_protocol import parse_responses_request

_USER = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize(
    "request_",
    [
        parse_request({"messages": _USER, "max_tokens": 4, "top_k": 5}, "chat"),
        parse_request({"prompt": [1, 2], "stream": True, "stream_options": {"include_usage": True}}, "completion"),
        parse_responses_request({"input": "hi", "max_output_tokens": 3, "seed": 7}),
        parse_messages_request({"messages": _USER, "max_tokens": 3, "stop_sequences": ["x"]}),
    ],
)
def test_a_parsed_request_is_read_only(request_: GenerationRequest) -> None:
    for name in ("max_tokens", "stream", "temperature", "tool_choice"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(request_, name, None)


def test_each_api_reads_its_own_names_into_the_shared_fields() -> None:
    chat = parse_request({"messages": _USER, "max_completion_tokens": 4, "max_tokens": 9, "top_k": -1,
                          "temperature": 0.5, "stream": True,
                          "stream_options": {"include_usage": True, "continuous_usage_stats": True}}, "chat")
    assert (chat.max_tokens, chat.top_k, chat.temperature, chat.top_p, chat.include_usage,
            chat.continuous_usage_stats) == (4, 0, 0.5, 1.0, True, True)
    responses = parse_responses_request({"input": "hi", "max_output_tokens": 3, "seed": 7, "min_tokens": 2})
    assert (responses.max_tokens, responses.max_tokens_param, responses.seed, responses.min_tokens) == (
        3, "max_output_tokens", 7, 2)
    messages = parse_messages_request({"messages": _USER, "max_tokens": 3, "stop_sequences": ["x"],
                                       "ignore_eos": True})
    assert (messages.max_tokens, messages.stop, messages.ignore_eos, messages.max_tokens_param) == (
        3, ["x"], True, "max_tokens")


@pytest.mark.parametrize("raw", [[1], "text", 3, None])
def test_a_body_that_is_not_an_object_is_refused(raw: object) -> None:
    with pytest.raises(APIError) as caught:
        JSONObject.of_body(raw)
    assert (caught.value.status, caught.value.code) == (400, "invalid_body")


def test_an_integer_past_64_bits_is_out_of_range_not_a_wrong_type() -> None:
    body = JSONObject({"seed": float(2**64), "max_tokens": True, "top_k": 2**63})
    with pytest.raises(APIError, match=r"'seed' must be an integer below 2\*\*63, got 1.84467e\+19"):
        body.read_int("seed")
    with pytest.raises(APIError, match="'max_tokens' must be an integer, got bool") as caught:
        body.read_int("max_tokens")
    assert caught.value.code == "invalid_type"
    with pytest.raises(APIError, match=r"'top_k' must be an integer below 2\*\*63, got 9223372036854775808"):
        body.read_int("top_k")
