"""The prefix-cache prediction uses the server's own block size when the server gives it: vLLM's
`vllm:cache_config_info` gauge (its CPU build: `block_size="128"`), from a small fake server, for
`goodput trace inspect --url` and for a trace replay's prediction before the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loadgen.cli import run_cli
from loadgen.run.scrape import parse_exposition
from loadgen.workload.prefix_cache import predict_hits
from loadgen.workload.traces import load_trace
from tests.loadgen._stream_server import paced_server
from tests.loadgen._traces import reuse_rows, write_mooncake

# What vLLM's CPU build serves (labels as vLLM writes them; one sample of value 1).
VLLM_CPU_METRICS = """# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig
# TYPE vllm:cache_config_info gauge
vllm:cache_config_info{block_size="128",cache_dtype="auto",calculate_kv_scales="False",cpu_offload_gb="0",\
enable_prefix_caching="True",gpu_memory_utilization="0.9",is_attention_free="False",num_cpu_blocks="None",\
num_gpu_blocks="3641",num_gpu_blocks_override="None",prefix_caching_hash_algo="sha256",sliding_window="None",\
swap_space="4",swap_space_bytes="4294967296"} 1.0
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 0.0
"""


def test_the_block_size_is_read_from_vllms_cache_config_info() -> None:
    assert parse_exposition(VLLM_CPU_METRICS).block_size == 128
    assert parse_exposition("vllm:num_requests_running 0\n").block_size is None


def test_trace_inspect_predicts_with_the_servers_block_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_mooncake(tmp_path / "t.jsonl", reuse_rows(40, gap_ms=100))
    trace = load_trace(str(path))
    at_128, at_16 = predict_hits(trace, block_size=128), predict_hits(trace, block_size=16)
    assert at_128.cached_tokens != at_16.cached_tokens  # the block size changes the answer
    with paced_server(metrics=VLLM_CPU_METRICS) as srv:
        assert run_cli(["trace", "inspect", str(path), "--url", srv.url, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)["prefix_cache"]
        assert out["block_size"] == 128 and out["block_size_source"] == "server"
        assert out["unbounded"]["cached_tokens"] == at_128.cached_tokens
        assert run_cli(["trace", "inspect", str(path), "--url", srv.url]) == 0
        assert "(server blocks of 128 tokens, from its vllm:cache_config_info)" in capsys.readouterr().out
        assert run_cli(["trace", "inspect", str(path), "--url", srv.url, "--block-size", "32", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["prefix_cache"]["block_size_source"] == "option"
    with paced_server() as srv:  # a server without /metrics: the default, said to be one
        assert run_cli(["trace", "inspect", str(path), "--url", srv.url]) == 0
        assert "(blocks of 16 tokens, the default: the server's own is unknown" in capsys.readouterr().out


def test_a_trace_replay_predicts_with_the_servers_block_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_mooncake(tmp_path / "t.jsonl", reuse_rows(8, gap_ms=20))
    trace = load_trace(str(path))
    with paced_server(first_s=0.002, gap_s=0.001, metrics=VLLM_CPU_METRICS, cached=0) as srv:
        code = run_cli(["run", "--url", srv.url, "--model", "m", "--trace", str(path), "--tokenizer", "words",
                        "--output", str(tmp_path / "run")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    expected = predict_hits(trace, block_size=128).hit_rate
    assert expected is not None
    assert (f"goodput: predicted prefix-cache hit rate of this replay: {expected:.1%} (server blocks of 128 tokens,"
            " from its vllm:cache_config_info)") in captured.err
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["resolved"]["prefix_cache_prediction"]["block_size"] == 128
    note = next(x for x in captured.out.splitlines() if x.startswith("note: prefix cache: measured"))
    assert f"predicted {expected:.1%}" in note and "128 tokens" in note
