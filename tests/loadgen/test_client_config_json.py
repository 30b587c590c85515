"""`--extra-body` is parsed once into a JSON object where the client's configuration is made (in the run's
process and in every worker, from the spec alone): same values, same key order, `--min-tokens` first, and the
bytes sent are the API's body with the user's keys after it. A spec whose extra body is another JSON value
(one not made by the flag, which refuses it) is refused there in one line."""

from __future__ import annotations

import dataclasses

import pytest

from loadgen.cli.run import run_defaults
from loadgen.dispatch import client_config_of
from loadgen.http.payload import encode_body
from loadgen.secrets import Secrets
from loadgen.spec.build import build_spec
from loadgen.spec.config_file import config_values, merge_values
from loadgen.spec.run_spec import RunSpec
from loadgen.types import WorkItem

UNREACHABLE = "http://127.0.0.1:9"
EXTRA = '{"top_k": 5, "nested": {"b": 1, "a": [1.5, null, true]}, "stop": ["x"]}'


def test_the_extra_body_reaches_the_client_as_given_and_in_order() -> None:
    values = config_values({"url": UNREACHABLE, "model": "m", "min_tokens": 3, "extra_body": EXTRA}, source="test")
    spec, secrets = build_spec(merge_values(run_defaults(), values, {}))
    for made in (spec, RunSpec.from_json(spec.to_json())):  # the run's own process, then a worker's
        config = client_config_of(made, secrets if made is spec else Secrets(), base_url=UNREACHABLE, model="m")
        assert config.extra_body == {"min_tokens": 3, "top_k": 5, "nested": {"b": 1, "a": [1.5, None, True]},
                                     "stop": ["x"]}
        assert list(config.extra_body) == ["min_tokens", "top_k", "nested", "stop"]
        assert list(config.extra_body["nested"]) == ["b", "a"]
        assert encode_body(WorkItem(prompt="hi"), config) == (
            b'{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,'
            b'"stream_options":{"include_usage":true,"continuous_usage_stats":true},'
            b'"min_tokens":3,"top_k":5,"nested":{"b":1,"a":[1.5,null,true]},"stop":["x"]}')


def test_no_extra_body_is_an_empty_object() -> None:
    spec, secrets = build_spec(merge_values(run_defaults(), config_values({"url": UNREACHABLE, "model": "m"},
                                                                          source="test"), {}))
    assert client_config_of(spec, secrets, base_url=UNREACHABLE, model="m").extra_body == {}


@pytest.mark.parametrize("text", ["[1]", "3", '"top_k"', "null"])
def test_an_extra_body_that_is_no_object_is_refused_where_the_client_is_made(text: str) -> None:
    spec, secrets = build_spec(merge_values(run_defaults(), config_values({"url": UNREACHABLE, "model": "m"},
                                                                          source="test"), {}))
    spec = dataclasses.replace(spec, request=dataclasses.replace(spec.request, extra_body=text))
    with pytest.raises(ValueError, match=r"^--extra-body must be a JSON object, not (list|int|str|NoneType)$"):
        client_config_of(spec, secrets, base_url=UNREACHABLE, model="m")
