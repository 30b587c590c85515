"""The HTTP layer over the real engine (tiny torch model on CPU): concurrency, prefix cache, disconnects."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from refserver.api import AppConfig
from refserver.api.serve import build_server_app
from refserver.engine.config import EngineConfig
from tests.refserver.fake_engine import serve_in_thread, sse_payloads

pytest.importorskip("torch")

NUM_BLOCKS = 256


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, object]]:
    config = EngineConfig(device="cpu", dtype="float32", num_blocks=NUM_BLOCKS, max_num_seqs=32)
    app = build_server_app(config, AppConfig())
    with serve_in_thread(app) as url:
        yield url, app.state.server.engine


def prefix_hits(url: str) -> float:
    text = httpx.get(f"{url}/metrics").text
    for family in text_string_to_metric_families(text):
        if family.name == "vllm:prefix_cache_hits":
            return float(sum(s.value for s in family.samples if s.name.endswith("_total")))
    raise AssertionError("vllm:prefix_cache_hits missing")


async def test_32_concurrent_streams_complete(served: tuple[str, object]) -> None:
    url, _ = served
    body = {
        "messages": [{"role": "user", "content": "count"}],
        "max_tokens": 12,
        "ignore_eos": True,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    async with httpx.AsyncClient(base_url=url, timeout=120.0) as client:
        responses = await asyncio.gather(*(client.post("/v1/chat/completions", json=body) for _ in range(32)))
    for response in responses:
        events = sse_payloads(response.text)
        assert events[-1] == "[DONE]"
        assert events[-3]["choices"][0]["finish_reason"] == "length"
        assert events[-2]["usage"]["completion_tokens"] == 12
        assert sum(e["goodput"]["n"] for e in events[:-1]) == 12


def test_shared_prefix_is_served_from_cache(served: tuple[str, object]) -> None:
    url, _ = served
    prefix = "The quick brown fox jumps over the lazy dog, then naps for a b"  # 63 bytes + bos = 64 tokens
    before = prefix_hits(url)
    first = httpx.post(f"{url}/v1/completions", json={"prompt": prefix + " first", "max_tokens": 2}, timeout=60.0)
    second = httpx.post(f"{url}/v1/completions", json={"prompt": prefix + " second", "max_tokens": 2}, timeout=60.0)
    assert first.json()["usage"]["prompt_tokens"] >= 64
    cached = second.json()["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert cached >= 48
    assert second.json()["timings"]["cache_n"] == cached
    assert prefix_hits(url) >= before + 48


async def test_disconnect_storm_frees_every_block(served: tuple[str, object]) -> None:
    url, engine = served
    body = {"messages": [{"role": "user", "content": "go"}], "max_tokens": 500, "ignore_eos": True, "stream": True}
    async with httpx.AsyncClient(base_url=url, timeout=120.0) as client:

        async def leave_after_first_chunks() -> None:
            async with client.stream("POST", "/v1/chat/completions", json=body) as response:
                seen = 0
                async for line in response.aiter_lines():
                    seen += line.startswith("data: ")
                    if seen >= 3:
                        return  # closing the stream mid-generation: the client is gone

        await asyncio.gather(*(leave_after_first_chunks() for _ in range(16)))
    deadline = time.monotonic() + 60.0
    while True:
        stats = engine.stats()  # type: ignore[attr-defined]
        if stats.num_running == 0 and stats.num_waiting == 0 and stats.num_free_blocks == stats.num_total_blocks:
            break
        assert time.monotonic() < deadline, f"blocks still held: {stats}"
        await asyncio.sleep(0.05)
    async with httpx.AsyncClient(base_url=url) as client:
        text = (await client.get("/metrics")).text
    aborted = [
        s.value
        for f in text_string_to_metric_families(text)
        if f.name == "vllm:request_success"
        for s in f.samples
        if s.name.endswith("_total") and s.labels["finished_reason"] == "abort"
    ]
    assert aborted == [16]


async def test_full_waiting_queue_answers_429_quickly() -> None:
    config = EngineConfig(device="cpu", dtype="float32", num_blocks=128, max_num_seqs=1, max_waiting=1)
    body = {"messages": [{"role": "user", "content": "wait"}], "max_tokens": 600, "ignore_eos": True}
    with serve_in_thread(build_server_app(config, AppConfig())) as url:
        async with httpx.AsyncClient(base_url=url, timeout=300.0) as client:

            async def timed() -> tuple[int, float]:
                start = time.perf_counter()
                response = await client.post("/v1/chat/completions", json=body)
                return response.status_code, time.perf_counter() - start

            results = await asyncio.gather(*(timed() for _ in range(5)))
    statuses = [status for status, _ in results]
    assert set(statuses) == {200, 429}, statuses
    # Refused without waiting for a slot: every 429 is back before any accepted request finished.
    assert max(t for s, t in results if s == 429) < min(t for s, t in results if s == 200)


def _save_tiny_as_hf(directory: Path) -> None:
    """The default tiny model through transformers' save_pretrained, with the byte tokenizer beside it."""
    transformers = pytest.importorskip("transformers")
    from refserver.model import tiny_config, tiny_model
    from refserver.text.tokenizer import save_byte_tokenizer

    c = tiny_config()
    hf_config = transformers.LlamaConfig(
        vocab_size=c.vocab_size, hidden_size=c.hidden_size, intermediate_size=c.intermediate_size,
        num_hidden_layers=c.num_layers, num_attention_heads=c.num_heads, num_key_value_heads=c.num_kv_heads,
        head_dim=c.head_dim, max_position_embeddings=c.max_position_embeddings, rms_norm_eps=c.rms_norm_eps,
        bos_token_id=c.bos_token_id, eos_token_id=c.eos_token_id,
    )  # fmt: skip
    hf = transformers.LlamaForCausalLM(hf_config)
    hf.load_state_dict(tiny_model(0, dtype="float32", device="cpu").state_dict())
    hf.save_pretrained(directory)
    save_byte_tokenizer(directory)


@pytest.mark.slow
def test_model_directory_serves_the_same_greedy_text(served: tuple[str, object], tmp_path: Path) -> None:
    _save_tiny_as_hf(tmp_path)
    body = {"messages": [{"role": "user", "content": "héllo"}], "max_tokens": 24, "temperature": 0, "ignore_eos": True}
    default_url, _ = served
    expected = httpx.post(f"{default_url}/v1/chat/completions", json=body, timeout=60.0).json()
    config = EngineConfig(model_dir=str(tmp_path), device="cpu", dtype="float32", num_blocks=64)
    with serve_in_thread(build_server_app(config, AppConfig(model_name="exported"))) as url:
        got = httpx.post(f"{url}/v1/chat/completions", json=body, timeout=60.0).json()
    assert got["model"] == "exported"
    assert got["usage"] == expected["usage"]
    assert got["choices"][0]["message"] == expected["choices"][0]["message"]
