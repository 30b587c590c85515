"""RunSpec: built once from option values, stored exactly, printed as a config file that builds it again."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loadgen.cli.run import run_defaults
from loadgen.secrets import Secrets
from loadgen.spec.build import build_spec, spec_values
from loadgen.spec.config_file import config_values, merge_values
from loadgen.spec.render import render_config
from loadgen.spec.run_spec import RunSpec
from loadgen.spec.sections import SpecError
from loadgen.workload.bounds import MAX_REQUESTS
from loadgen.workload.durations import parse_duration_flag

durations = st.one_of(
    st.sampled_from(["0s", "250ms", "1s", "30s", "2m", "1h", "0.5"]),
    st.floats(0.001, 1e5, allow_nan=False, allow_infinity=False).map(lambda x: f"{x!r}s"),
)
positive_durations = durations.filter(lambda d: d not in ("0s",))
lengths = st.one_of(
    st.integers(1, 100_000).map(str),
    st.tuples(st.integers(1, 500), st.integers(0, 500)).map(lambda ab: f"uniform:{ab[0]}:{ab[0] + ab[1]}"),
    # A lognormal as wide as sigma 3 draws past the 10M-token limit too often: the spec refuses it.
    st.tuples(st.floats(1, 5000), st.floats(0, 1.5)).map(lambda ms: f"lognormal:{ms[0]!r}:{ms[1]!r}"),
    st.tuples(st.floats(1, 5000), st.floats(0, 300)).map(lambda ms: f"normal:{ms[0]!r}:{ms[1]!r}"),
)
turn_counts = st.one_of(
    st.integers(1, 1000).map(str),
    st.tuples(st.floats(1, 50), st.floats(0, 1)).map(lambda ms: f"lognormal:{ms[0]!r}:{ms[1]!r}"),
)
rates = st.floats(0.01, 5000, allow_nan=False)
slo_items = st.lists(st.sampled_from(["ttft=500ms", "tpot=50ms", "e2e=10s", "itl_max=1s", "ttfo=2s"]), unique=True)
threshold_items = st.lists(st.one_of(
    st.sampled_from(["ttft:p(99)<800ms", "goodput:attainment>=0.9", "errors:rate<0.01", "ttft{cache:full}:p(95)<200ms",
                     "e2e:max<30s | nodata=pass"]),
    st.tuples(st.sampled_from(["tpot:p(50)<40ms", "errors:count<5"]), st.just(True)),
), max_size=3, unique=True)
names = st.text("abcdefghij", min_size=1, max_size=6)
think_times = st.one_of(
    durations,
    durations.map(lambda d: f"exponential:{d}"),
    st.tuples(st.floats(0, 100), st.floats(0, 100)).map(lambda ab: f"uniform:{min(ab)!r}s:{max(ab)!r}s"),
    st.tuples(positive_durations, st.floats(0, 3)).map(lambda ms: f"lognormal:{ms[0]}:{ms[1]!r}"),
)


def _traffic(draw: st.DrawFn, v: dict[str, Any]) -> None:
    """The options of issue 12: a trace replay, conversations, cache busting and prompt sizing."""
    mode = draw(st.sampled_from(["requests", "sessions", "trace"]))
    if mode == "trace":
        v["trace"], v["trace_format"] = "trace.jsonl", draw(st.sampled_from(["auto", "mooncake", "azure", "burstgpt"]))
        v["arrival"], v["prefix_groups"], v["prefix_tokens"], v["prefix_weights"] = "trace", 0, 0, None
        v["rate"] = draw(st.none() | rates)
        v["time_scale"] = draw(st.floats(0.01, 100)) if v["rate"] is None else 1.0
        v["trace_start"] = draw(durations)
        v["trace_duration"] = draw(st.none() | positive_durations)
        v["duration"] = draw(st.none() | positive_durations)
        v["requests"] = draw(st.none() | st.integers(1, 10**6))
    elif mode == "sessions":
        v["turns"], v["think_time"] = draw(turn_counts), draw(think_times)
    v["cache_bust"] = draw(st.booleans())
    sizings = ["auto", "tokenize", "calibrate", "counter"] if v["tokenizer"] == "auto" else ["auto", "counter"]
    v["prompt_sizing"] = draw(st.sampled_from(sizings))


def _planned(v: dict[str, Any]) -> float:
    rate = (v["rate"] + v["rate_end"]) / 2 if v["arrival"] == "ramp" else v["rate"]
    return float(rate * parse_duration_flag(v["duration"], "--duration"))


@st.composite
def option_values(draw: st.DrawFn) -> dict[str, Any]:
    v = dict(run_defaults())
    kind = draw(st.sampled_from(["constant", "poisson", "gamma", "ramp", "concurrency"]))
    v["arrival"] = kind
    if kind == "concurrency":
        v["concurrency"] = draw(st.integers(1, 512))
        v["rate"] = draw(st.none() | rates)
    else:
        v["rate"] = draw(rates)
    if kind == "gamma":
        v["burstiness"] = draw(st.floats(0.05, 10))
    if kind == "ramp":
        v["rate_end"] = draw(rates)
    v["duration"] = draw(positive_durations) if kind == "ramp" else draw(st.none() | positive_durations)
    v["requests"] = draw(st.none() | st.integers(1, 10**6)) if v["duration"] else draw(st.integers(1, 10**6))
    if v["requests"] is None and kind != "concurrency" and _planned(v) > MAX_REQUESTS:
        v["requests"] = draw(st.integers(1, 10**6))  # rate × duration alone would plan too many
    for name in ("warmup", "cooldown", "grace", "metrics_linger"):
        v[name] = draw(durations)
    v["url"] = draw(st.none() | st.integers(1024, 65535).map(lambda p: f"http://127.0.0.1:{p}"))
    v["server_arg"] = draw(st.lists(st.sampled_from(["--max-num-seqs=8", "--engine=sim"]), max_size=2)) \
        if v["url"] is None else []
    v["model"] = draw(st.none() | names)
    v["endpoint"] = draw(st.sampled_from(["chat", "completions"]))
    v["prompt_tokens"], v["output_tokens"] = draw(lengths), draw(lengths)
    groups = draw(st.integers(0, 4))
    v["prefix_groups"], v["prefix_tokens"] = groups, draw(st.integers(1, 4096)) if groups else 0
    if groups and draw(st.booleans()):
        v["prefix_weights"] = ",".join(repr(w) for w in draw(st.lists(st.floats(0.1, 10), min_size=groups,
                                                                          max_size=groups)))
    v["tag"] = [f"{k}={val}" for k, val in draw(st.dictionaries(names, names, max_size=2)).items()]
    v["header"] = [f"X-{k}: {val}" for k, val in draw(st.dictionaries(names, names, max_size=2)).items()]
    v["tokenizer"] = draw(st.sampled_from(["auto", "words", "bytes"]))
    v["seed"] = draw(st.integers(0, 2**31))
    v["ignore_eos"] = draw(st.none() | st.booleans())
    v["min_tokens"] = draw(st.none() | st.integers(0, 64))
    v["temperature"] = draw(st.none() | st.floats(0, 2))
    v["usage"], v["continuous_usage"] = draw(st.booleans()), draw(st.booleans())
    v["extra_body"] = draw(st.none() | st.sampled_from(['{"top_p": 0.9}', '{"stop": ["x"], "n": 1}']))
    v["max_connections"] = draw(st.integers(1, 100_000))
    for name in ("timeout_connect", "timeout_first_byte", "timeout_between_chunks", "timeout_total",
                 "stall_threshold", "server_metrics_interval"):
        v[name] = draw(positive_durations)
    v["lag_threshold"] = draw(durations)
    v["slo"] = draw(slo_items)
    v["threshold"] = draw(threshold_items)
    v["abort_on_fail"] = bool(v["threshold"]) and draw(st.booleans())
    v["abort_delay"] = draw(st.none() | durations)
    v["abort_interval"] = draw(st.none() | positive_durations)
    v["prompt_buckets"] = draw(st.none() | st.sampled_from(["0,256,1024", "0,128,512,2048,8192,32768"]))
    v["cache_full_ratio"] = draw(st.floats(0.01, 1.0))
    v["absent_cache_is_zero"] = draw(st.booleans())
    v["output"] = draw(st.none() | st.sampled_from(["runs/x", "/tmp/somewhere"]))
    v["overwrite"], v["quiet"] = draw(st.booleans()), draw(st.booleans())
    v["metrics_port"] = draw(st.none() | st.integers(0, 65535))
    v["pushgateway"] = draw(st.none() | st.just("http://127.0.0.1:9091"))
    if v["pushgateway"]:
        v["pushgateway_interval"] = draw(durations)
        v["pushgateway_delete"] = draw(st.booleans())
        v["pushgateway_user"] = draw(st.none() | names)
        v["pushgateway_password"] = "pw" if v["pushgateway_user"] else None  # a secret: from the environment
    v["server_metrics"] = draw(st.sampled_from(["auto", "none", "http://127.0.0.1:8000/metrics"]))
    if draw(st.booleans()):
        v["model_config"], v["gpu"] = draw(st.sampled_from(["Llama-3.1-8B", "Qwen2.5-7B"])), "H100-SXM"
        v["tp"], v["weight_dtype"] = draw(st.sampled_from([1, 2, 4])), draw(st.sampled_from(["bf16", "fp8"]))
    _traffic(draw, v)
    _scale(draw, v)
    return v


def _scale(draw: st.DrawFn, v: dict[str, Any]) -> None:
    """The options of issue 15: worker processes, Ray, placement, what a lost worker does."""
    most = v["concurrency"] if v["arrival"] == "concurrency" else 64
    v["workers"] = draw(st.sampled_from(["1", "auto"]) | st.integers(1, most).map(str))
    v["ray"] = draw(st.none() | st.sampled_from(["auto", "10.0.0.5:6379", "ray://head:10001"]))
    v["ray_placement"] = "spread" if v["ray"] is None else draw(st.sampled_from(["spread", "zone=a", "gpu=h100"]))
    v["on_worker_failure"] = draw(st.sampled_from(["stop", "continue"]))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(option_values())
def test_a_spec_round_trips_through_json_options_and_yaml(values: dict[str, Any]) -> None:
    spec, secrets = build_spec(values)
    stored = json.loads(json.dumps(spec.to_json()))
    assert RunSpec.from_json(stored) == spec
    env = {"pushgateway_password": secrets.pushgateway_password}  # secrets are never printed: they come back
    assert build_spec({**spec_values(spec), **env}) == (spec, secrets)
    from_file = config_values(yaml.safe_load(render_config(spec)), source="printed")
    assert build_spec(merge_values(run_defaults(), from_file, env)) == (spec, secrets)


def test_the_defaults_of_the_flags_are_the_defaults_of_the_spec() -> None:
    assert build_spec(run_defaults()) == (RunSpec(), Secrets())


def _values(**changes: Any) -> dict[str, Any]:
    return {**run_defaults(), **changes}


def test_no_secret_reaches_the_stored_or_printed_spec() -> None:
    secrets = ["sk-live-123", "push-pw", "Bearer tok-9", "tiger-pass", "server-key"]
    spec, held = build_spec(_values(
        api_key=secrets[0], pushgateway="http://127.0.0.1:9091", pushgateway_user="ci",
        pushgateway_password=secrets[1], header=[f"Authorization: {secrets[2]}", "X-Trace: on"],
        url=f"http://scott:{secrets[3]}@127.0.0.1:8000/v1", server_arg=[]))
    embedded, held_embedded = build_spec(_values(server_arg=["--max-num-seqs=4", "--api-key", secrets[4]]))
    for text in (json.dumps(spec.to_json()), render_config(spec), repr(spec), repr(held),
                 json.dumps(embedded.to_json()), render_config(embedded), repr(held_embedded)):
        assert not any(s in text for s in secrets), text
    assert spec.request.headers == (("X-Trace", "on"),) and spec.request.secret_headers == ("Authorization",)
    assert spec.target.url == "http://127.0.0.1:8000/v1"
    assert held.url == f"http://scott:{secrets[3]}@127.0.0.1:8000/v1"
    assert held.api_key == secrets[0] and held.pushgateway_password == secrets[1]
    assert embedded.target.server_args == ("--max-num-seqs=4",)
    assert held_embedded.server_args == ("--api-key", secrets[4])


def test_pushgateway_credentials_in_the_url_become_secrets() -> None:
    spec, held = build_spec(_values(pushgateway="http://alice:s3cret@127.0.0.1:9091"))
    assert spec.prometheus.pushgateway == "http://127.0.0.1:9091" and spec.prometheus.pushgateway_user == "alice"
    assert held.pushgateway_password == "s3cret"
    with pytest.raises(SpecError, match="both given"):
        build_spec(_values(pushgateway="http://alice:s3cret@127.0.0.1:9091", pushgateway_user="bob"))


@pytest.mark.parametrize(("bad", "message"), [
    ({"spec_version": 99}, "newer than this goodput"),
    ({"load": {"arrival": {"kind": "poisson", "rate": -1.0}}}, "--rate must be a positive"),
    ({"load": {"requests": 0}}, "--requests must be >= 1"),
    ({"workload": {"prompt_tokens": {"kind": "zipf", "a": 1.0, "b": 2.0}}}, "length distribution"),
    ({"target": {"endpoint": "embeddings"}}, "--endpoint"),
    ({"target": {"colour": "red"}}, "unknown field"),
    ({"gate": {"thresholds": ["ttft:p(99)<<3"]}}, "gate.thresholds"),
    ({"timeouts": {"connect_s": 0}}, "--timeout-connect"),
    ({"workload": {"think_time": {"kind": "uniform", "a": 3.0, "b": 1.0}}}, "--think-time: bad value"),
    ({"workload": {"turns": {"kind": "fixed", "a": 0.0, "b": 0.0}}}, "workload.turns: bad length"),
    ({"workload": {"trace": "t.jsonl"}}, "--arrival poisson does not apply"),
    ({"load": {"arrival": {"kind": "trace", "rate": 0.0}, "requests": None}}, "--arrival trace needs --trace"),
    ({"load": {"time_scale": 2.0}}, "apply to --trace only"),
    ({"scale": {"workers": 0}}, "--workers must be >= 1"),
    ({"scale": {"on_worker_failure": "retry"}}, "--on-worker-failure"),
    ({"scale": {"ray_placement": "zone=a"}}, "--ray-placement needs --ray"),
])
def test_a_stored_spec_is_checked_like_a_new_one(bad: dict[str, Any], message: str) -> None:
    stored = RunSpec().to_json()
    for section, fields in bad.items():
        if isinstance(fields, dict):
            stored[section] = {**stored[section], **fields}
        else:
            stored[section] = fields
    with pytest.raises(SpecError, match=message):
        RunSpec.from_json(stored)


def test_a_spec_without_newer_fields_takes_their_defaults() -> None:
    stored = RunSpec().to_json()
    del stored["prometheus"]
    del stored["load"]["grace_s"]
    assert RunSpec.from_json(stored) == RunSpec()
