"""The codecs of loadgen.spec.codecs: each derived option's value becomes its spec field once and comes back
from it unchanged (what --print-config writes), and a bad value is the same one-line error naming the flag
that the hand-written code gave."""

from __future__ import annotations

from typing import Any

import pytest

from loadgen.cli.run import run_defaults
from loadgen.spec.build import build_spec, spec_values
from loadgen.spec.codecs import CONVERSIONS
from loadgen.spec.sections import SpecError
from loadgen.workload import LengthDist, ThinkTime

# Values as a flag or a config file gives them, each in the form the codec writes back.
CANONICAL: dict[str, tuple[Any, ...]] = {
    "length_or_none": (None, "3", "uniform:2:4"),
    "think_time": ("0s", "1.5s", "exponential:5s", "uniform:1s:4s"),
    "numbers": (None, "1,2,0.5"),
    "edges": (None, "0,128,512"),
    "pairs": ([], ["a=1", "b=2"]),
    "strings": ([], ["g=http://127.0.0.1:9400/metrics"]),
    "count_or_auto": ("auto", "3"),
    "json_object": (None, '{"a":1,"b":[1,2]}'),
    "fail_limit": ("10%", "25", "2.5%"),
    "slo": ([], ["ttft=500ms", "tpot=50ms"]),
}


@pytest.mark.parametrize("codec", sorted(CONVERSIONS))
def test_a_value_comes_back_from_its_field(codec: str) -> None:
    conversion = CONVERSIONS[codec]
    for value in CANONICAL[codec]:
        field = conversion.parse(tuple(value) if isinstance(value, list) else value, "--x")
        assert conversion.format(field) == value, f"{codec}: {value!r} came back as {conversion.format(field)!r}"
        assert conversion.parse(conversion.format(field), "--x") == field


def test_the_fields_are_the_parsed_values() -> None:
    spec, _ = build_spec({**run_defaults(), "turns": "uniform:2:4", "think_time": "exponential:5s",
                          "tool_result_tokens": "32", "prefix_groups": 2, "prefix_tokens": 8, "prefix_weights": "1,3",
                          "tag": ["a=1", "b=2", "a=3"], "workers": "auto", "max_failed": "2.50%",
                          "extra_body": '{ "top_k" : 5 }', "prompt_buckets": "0,8,64", "duration": "1m"})
    w = spec.workload
    assert w.turns == LengthDist("uniform", 2.0, 4.0) and w.think_time == ThinkTime("exponential", 5.0)
    assert w.tool_result_tokens == LengthDist("fixed", 32.0) and w.prefix_weights == (1.0, 3.0)
    assert w.tags == (("a", "3"), ("b", "2"))  # a key given again keeps its first place and takes the last value
    assert spec.scale.workers is None and spec.load.max_failed == "2.5%" and spec.load.duration_s == 60.0
    assert spec.request.extra_body == '{"top_k":5}' and spec.metrics.prompt_bucket_edges == (0, 8, 64)
    assert spec.load.requests is None  # a duration bounds the run: no default count
    back = spec_values(spec)
    assert (back["tag"], back["max_failed"], back["extra_body"], back["duration"]) == (
        ["a=3", "b=2"], "2.5%", '{"top_k":5}', "1m")


@pytest.mark.parametrize(("given", "message"), [
    ({"prefix_groups": 2, "prefix_tokens": 8, "prefix_weights": "a,b"},
     "--prefix-weights expects comma-separated numbers, got 'a,b'"),
    ({"tag": ["novalue"]}, "--tag expects KEY=VALUE, got 'novalue'"),
    ({"workers": "x"}, "--workers expects a number of workers or auto, got 'x'"),
    ({"extra_body": "[1]"}, "--extra-body must be a JSON object"),
    ({"extra_body": "{bad"}, "--extra-body is not valid JSON: Expecting property name enclosed in double quotes"),
    ({"prompt_buckets": "5,1"}, "--prompt-buckets must be increasing non-negative integers, got '5,1'"),
    ({"output_buckets": "a"}, "--output-buckets expects comma-separated integers, got 'a'"),
    ({"tool_result_tokens": "x"}, "--tool-result-tokens: bad length 'x': use N, uniform:LO:HI, normal:MEAN:STD or "
                                  "lognormal:MEDIAN:SIGMA"),
    ({"max_failed": "x"}, "--max-failed must be a percentage (10%) or a count of requests (25), got 'x'"),
    ({"duration": "0s"}, "--duration must be greater than 0, got '0s'"),
])
def test_a_bad_value_is_one_line_naming_its_flag(given: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError) as caught:
        build_spec({**run_defaults(), **given})
    assert str(caught.value) == message


def test_the_agent_loops_durations_name_their_own_flag() -> None:
    with pytest.raises(SpecError, match=r"^--tool-latency: ") as caught:
        build_spec({**run_defaults(), "tool_latency": "gamma:1s"})
    assert "--think-time" not in str(caught.value)
    with pytest.raises(SpecError, match=r"^--tool-latency: bad value 'x' \(--tool-latency: invalid duration") as caught:
        build_spec({**run_defaults(), "tool_latency": "x"})  # the duration's own message names the flag too
    assert "--think-time" not in str(caught.value)
    with pytest.raises(SpecError, match=r"^--think-time: "):
        build_spec({**run_defaults(), "turns": "2", "think_time": "gamma:1s"})


@pytest.mark.parametrize(("values", "lead"), [
    ({"turns": "abc"}, "--turns: bad length 'abc'"),
    ({"prompt_tokens": "abc"}, "--prompt-tokens: bad length 'abc'"),
    ({"output_tokens": "uniform:9"}, "--output-tokens: bad length 'uniform:9'"),
    ({"slo": ["ttft=bad"]}, "--slo: invalid SLO ttft='bad'"),
])
def test_a_bad_length_or_slo_names_its_flag(values: dict[str, Any], lead: str) -> None:
    with pytest.raises(SpecError) as caught:
        build_spec({**run_defaults(), **values})
    assert str(caught.value).startswith(lead)
