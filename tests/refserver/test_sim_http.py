"""The sim engine behind the real HTTP layer: many concurrent streams, filler text, a model directory."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from refserver.api.app import AppConfig
from refserver.api.serve import build_server_app
from refserver.engine import build_engine
from refserver.engine.config import EngineConfig
from refserver.engine.sim_runner import SimModelRunner, SimOptions, describe_engine, make_sim_runner
from tests.refserver.fake_engine import serve_in_thread, sse_payloads

pytest.importorskip("uvicorn")


async def test_200_concurrent_streams_against_the_sim_engine() -> None:
    config = EngineConfig(runner="sim", sim=SimOptions(model="Llama-3.1-8B", gpu="H100-SXM", efficiency=1.0),
                          max_num_seqs=256, max_num_batched_tokens=8192, max_waiting=512)
    app = build_server_app(config, AppConfig(model_name="sim-llama"))
    body = {"messages": [{"role": "user", "content": "tell me something"}], "max_tokens": 8, "stream": True,
            "stream_options": {"include_usage": True}}
    with serve_in_thread(app) as url:
        async with httpx.AsyncClient(base_url=url, timeout=120.0,
                                     limits=httpx.Limits(max_connections=300)) as client:
            responses = await asyncio.gather(*(client.post("/v1/chat/completions", json=body) for _ in range(200)))
    for response in responses:
        assert response.status_code == 200
        events = sse_payloads(response.text)
        assert events[-1] == "[DONE]"
        assert events[-2]["usage"]["completion_tokens"] == 8
        text = "".join(e["choices"][0]["delta"].get("content", "") for e in events[:-2] if e.get("choices"))
        assert text == "lorem ip"


def test_model_dir_sets_timing_and_the_served_vocabulary(tmp_path: Path) -> None:
    hf = {"model_type": "llama", "hidden_size": 2048, "num_attention_heads": 16, "num_key_value_heads": 4,
          "num_hidden_layers": 16, "intermediate_size": 8192, "vocab_size": 32000, "eos_token_id": [2, 7],
          "bos_token_id": 1, "max_position_embeddings": 2048}
    (tmp_path / "config.json").write_text(json.dumps(hf))
    runner = make_sim_runner(EngineConfig(runner="sim", model_dir=str(tmp_path), sim=SimOptions(gpu="L4")))
    assert isinstance(runner, SimModelRunner)
    assert runner.sim_model.num_layers == 16
    assert runner.model_config.vocab_size == 32000
    assert runner.model_config.eos_token_ids == (2, 7)
    assert runner.model_config.max_position_embeddings == 2048
    preset = make_sim_runner(EngineConfig(runner="sim", model_dir=str(tmp_path), sim=SimOptions(model="Qwen2.5-7B")))
    assert preset.sim_model.name == "Qwen2.5-7B"  # an explicit sim model wins over the directory


def test_describe_engine_names_the_simulated_deployment() -> None:
    engine = build_engine(EngineConfig(runner="sim", sim=SimOptions(model="Mistral-7B", gpu="H200", tp=2)))
    info = describe_engine(engine)
    assert info is not None
    assert (info["engine"], info["sim_model"], info["sim_gpu"], info["tp"]) == ("sim", "Mistral-7B", "H200", 2)
    assert describe_engine(object()) is None
