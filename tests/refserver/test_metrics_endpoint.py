"""`/metrics`: vLLM's names, types, labels and buckets, fed by real requests through the fake engine."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from refserver.api.server_metrics import (
    ITL_BUCKETS,
    REQUEST_LATENCY_BUCKETS,
    TTFT_BUCKETS,
    build_1_2_5_buckets,
)
from tests.refserver.fake_engine import DEFAULT_SCRIPT, FakeEngine, make_app, serve_in_thread

HISTOGRAMS = {
    "vllm:time_to_first_token_seconds": TTFT_BUCKETS,
    "vllm:inter_token_latency_seconds": ITL_BUCKETS,
    "vllm:time_per_output_token_seconds": ITL_BUCKETS,
    "vllm:e2e_request_latency_seconds": REQUEST_LATENCY_BUCKETS,
    "vllm:request_queue_time_seconds": REQUEST_LATENCY_BUCKETS,
    "vllm:request_prefill_time_seconds": REQUEST_LATENCY_BUCKETS,
    "vllm:request_decode_time_seconds": REQUEST_LATENCY_BUCKETS,
    "vllm:request_inference_time_seconds": REQUEST_LATENCY_BUCKETS,
}
COUNTERS = [
    "vllm:prefix_cache_queries",
    "vllm:prefix_cache_hits",
    "vllm:prompt_tokens",
    "vllm:generation_tokens",
    "vllm:request_success",
    "vllm:num_preemptions",
]
GAUGES = ["vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc"]


def scrape(url: str) -> dict[str, Any]:
    response = httpx.get(f"{url}/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return {family.name: family for family in text_string_to_metric_families(response.text)}


def value(families: dict[str, Any], family: str, sample: str, **labels: str) -> float:
    matches = [s for s in families[family].samples if s.name == sample and all(s.labels.get(k) == v for k, v in labels.items())]
    assert len(matches) == 1, (sample, labels, families[family].samples)
    found: Sample = matches[0]
    return float(found.value)


def test_build_1_2_5_buckets() -> None:
    assert build_1_2_5_buckets(100) == [1, 2, 5, 10, 20, 50, 100]
    assert build_1_2_5_buckets(4096)[-1] == 2000


def test_names_types_labels_and_buckets() -> None:
    with serve_in_thread(make_app(FakeEngine(), model_name="m1", max_model_len=4096)) as url:
        families = scrape(url)
    for name, buckets in {**HISTOGRAMS, "vllm:request_prompt_tokens": tuple(build_1_2_5_buckets(4096))}.items():
        family = families[name]
        assert family.type == "histogram"
        bounds = [s.labels["le"] for s in family.samples if s.name == f"{name}_bucket"]
        assert bounds == [*(str(float(b)) for b in buckets), "+Inf"]
        assert all(s.labels["model_name"] == "m1" for s in family.samples)
    for name in COUNTERS:
        assert families[name].type == "counter"
        assert any(s.name == f"{name}_total" for s in families[name].samples)
    for name in GAUGES:
        assert families[name].type == "gauge"
    reasons = {s.labels["finished_reason"] for s in families["vllm:request_success"].samples if s.name.endswith("_total")}
    assert reasons == {"stop", "length", "abort", "error"}


def test_requests_move_the_metrics() -> None:
    engine = FakeEngine(step_s=0.001)
    with serve_in_thread(make_app(engine, model_name="m1")) as url:
        prompt = "z" * 48
        bodies = [
            httpx.post(f"{url}/v1/completions", json={"prompt": prompt, "max_tokens": n}).json() for n in (3, 5)
        ]
        httpx.post(f"{url}/v1/completions", json={"prompt": prompt + "!"})  # ends on eos: "stop"
        families = scrape(url)
    assert value(families, "vllm:time_to_first_token_seconds", "vllm:time_to_first_token_seconds_count") == 3
    expected_tokens = 3 + 5 + len(DEFAULT_SCRIPT) + 1
    assert value(families, "vllm:generation_tokens", "vllm:generation_tokens_total") == expected_tokens
    assert value(families, "vllm:inter_token_latency_seconds", "vllm:inter_token_latency_seconds_count") == expected_tokens - 3
    # One token per step: the gaps of a request add up to its decode time (first → last token).
    itl_sum = value(families, "vllm:inter_token_latency_seconds", "vllm:inter_token_latency_seconds_sum")
    decode_sum = value(families, "vllm:request_decode_time_seconds", "vllm:request_decode_time_seconds_sum")
    assert itl_sum > 0
    assert itl_sum == pytest.approx(decode_sum, rel=1e-9)
    tpot_sum = value(families, "vllm:time_per_output_token_seconds", "vllm:time_per_output_token_seconds_sum")
    assert tpot_sum == itl_sum
    prompt_tokens = sum(b["usage"]["prompt_tokens"] for b in bodies) + 50
    assert value(families, "vllm:prompt_tokens", "vllm:prompt_tokens_total") == prompt_tokens
    assert value(families, "vllm:request_success", "vllm:request_success_total", finished_reason="length") == 2
    assert value(families, "vllm:request_success", "vllm:request_success_total", finished_reason="stop") == 1
    assert value(families, "vllm:e2e_request_latency_seconds", "vllm:e2e_request_latency_seconds_count") == 3
    assert value(families, "vllm:request_generation_tokens", "vllm:request_generation_tokens_sum") == expected_tokens
    # Block-sized prefix of 48 'z' + bos: the 2nd and 3rd requests hit 48 cached tokens each.
    assert value(families, "vllm:prefix_cache_hits", "vllm:prefix_cache_hits_total") == 96
    assert value(families, "vllm:prefix_cache_queries", "vllm:prefix_cache_queries_total") == prompt_tokens


def test_gauges_read_engine_stats_at_scrape_time() -> None:
    engine = FakeEngine(paused=True)
    body = {"prompt": "x" * 40, "stream": True}
    with (
        serve_in_thread(make_app(engine)) as url,
        httpx.Client(base_url=url, timeout=60.0) as client,
        client.stream("POST", "/v1/completions", json=body) as response,
    ):
        deadline = time.monotonic() + 30.0
        while engine.stats().num_running != 1:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        families = scrape(url)
        assert value(families, "vllm:num_requests_running", "vllm:num_requests_running") == 1
        assert value(families, "vllm:num_requests_waiting", "vllm:num_requests_waiting") == 0
        assert value(families, "vllm:kv_cache_usage_perc", "vllm:kv_cache_usage_perc") == engine.stats().kv_usage > 0
        engine.paused = False
        response.read()


def test_each_app_has_its_own_registry() -> None:
    first, second = make_app(FakeEngine()), make_app(FakeEngine())
    assert first.state.server.metrics.registry is not second.state.server.metrics.registry


def test_the_kv_block_size_is_published_as_vllm_does() -> None:
    """`vllm:cache_config_info{block_size=...}`: what goodput reads to predict a trace replay's prefix-cache
    hits in the server's own blocks (loadgen.run.cache_prediction), from the engine's real configuration."""
    from loadgen.run.scrape import parse_exposition
    from refserver.api.app import AppConfig
    from refserver.api.serve import build_server_app
    from refserver.engine.config import EngineConfig
    from refserver.engine.sim_runner import SimOptions

    engine = EngineConfig(runner="sim", sim=SimOptions(model="Llama-3.1-8B", gpu="H100-SXM"), block_size=128,
                          num_blocks=300, enable_prefix_caching=False)
    with serve_in_thread(build_server_app(engine, AppConfig(model_name="m"))) as url:
        text = httpx.get(f"{url}/metrics").text
    family = {f.name: f for f in text_string_to_metric_families(text)}["vllm:cache_config_info"]
    assert family.type == "gauge" and [s.value for s in family.samples] == [1.0]
    assert family.samples[0].labels == {"block_size": "128", "num_gpu_blocks": "300",
                                        "enable_prefix_caching": "False"}
    assert parse_exposition(text).block_size == 128
