"""A cancel storm against the reference server (sim engine, real HTTP layer): the client closes every stream
mid-answer, and the server aborts each sequence at once: its running gauge falls back to zero, its KV usage
to none, and every block of its block manager is free again."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import httpx
import pytest

from loadgen.http.send.client import StreamingClient
from loadgen.run.scrape import parse_exposition
from loadgen.types import ClientConfig, WorkItem
from refserver.api.app import create_app
from refserver.api.serve import build_server_app
from refserver.api.state import AppConfig
from refserver.engine import AsyncLLMEngine, build_engine
from refserver.engine.config import EngineConfig
from refserver.engine.sim_runner import SimOptions
from refserver.text.chat_template import load_chat_template
from refserver.text.tokenizer import load_tokenizer
from tests.refserver.fake_engine import serve_in_thread

pytest.importorskip("uvicorn")

STREAMS = 24
MAX_TOKENS = 3000  # seconds of decoding each, were they not cancelled
RELEASE_LIMIT_S = 2.0  # the abort takes one engine step; far more means the server kept them


async def _gauges(client: httpx.AsyncClient) -> dict[str, float]:
    response = await client.get("/metrics")
    return parse_exposition(response.text).gauges


async def test_a_cancel_storm_leaves_nothing_running_and_every_block_free() -> None:
    config = EngineConfig(runner="sim", sim=SimOptions(model="Llama-3.1-8B", gpu="H100-SXM", efficiency=1.0),
                          max_num_seqs=64, max_num_batched_tokens=8192, max_waiting=128)
    engine = build_engine(config)
    assert isinstance(engine, AsyncLLMEngine)
    tokenizer = load_tokenizer(None)
    app = create_app(engine, tokenizer, AppConfig(model_name="sim"), chat_template=load_chat_template(None, tokenizer))
    blocks = engine.engine.block_manager
    with serve_in_thread(app) as url:
        async with (
            StreamingClient(ClientConfig(base_url=url, model="sim", ignore_eos=True)) as client,
            httpx.AsyncClient(base_url=url, timeout=10.0) as scraper,
        ):
            def item(i: int) -> WorkItem:  # half closed after 3 tokens, half 50-120 ms after the send
                plan = {"cancel_after_tokens": 3} if i % 2 else {"cancel_after_s": 0.05 + 0.01 * (i % 8)}
                return WorkItem(messages=[{"role": "user", "content": f"story {i} " * 10}], max_tokens=MAX_TOKENS,
                                **plan)  # type: ignore[arg-type]

            records = await asyncio.gather(*(client.send(item(i), request_id=i, intended_ns=0, anchor_ns=0)
                                             for i in range(STREAMS)))
            last_close = time.perf_counter()
            assert [r.status for r in records] == ["cancelled"] * STREAMS, {r.error_message for r in records}
            assert all(r.error_kind == "planned_cancel" for r in records)
            assert all(r.output_tokens == 3 for r in records[1::2])  # closed mid-decode
            gauges = await _gauges(scraper)
            while gauges["vllm:num_requests_running"] + gauges["vllm:num_requests_waiting"] > 0:
                assert time.perf_counter() - last_close < RELEASE_LIMIT_S, f"still held: {gauges}"
                await asyncio.sleep(0.01)
                gauges = await _gauges(scraper)
            assert gauges["vllm:kv_cache_usage_perc"] == 0.0
            assert blocks.num_free_blocks == blocks.num_total_blocks
            assert all(b.ref_count == 0 for b in blocks.blocks)
            assert not engine.engine.seqs


def test_goodput_run_with_cancellations_reports_the_release(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`goodput run --cancel-rate --cancel-after` end to end: the plan reaches the wire, summary.json counts the
    planned cancels apart and leaves them out of goodput, and the server's release is reported."""
    from loadgen.cli import run_cli

    config = EngineConfig(runner="sim", sim=SimOptions(model="Llama-3.1-8B", gpu="H100-SXM", efficiency=1.0))
    app = build_server_app(config, AppConfig(model_name="sim"))
    out = tmp_path / "run"
    with serve_in_thread(app) as url:
        code = run_cli(["run", "--url", url, "--model", "sim", "--requests", "16", "--rate", "40", "--arrival",
                        "constant", "--prompt-tokens", "16", "--output-tokens", "100", "--ignore-eos",
                        "--tokenizer", "words", "--prompt-sizing", "counter", "--cancel-rate", "0.5",
                        "--cancel-after", "tokens:uniform:2:6", "--seed", "3", "--server-metrics-interval", "100ms",
                        "--no-html", "--quiet", "--output", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    cancelled = [r for r in records if r["error_kind"] == "planned_cancel"]
    assert 3 <= len(cancelled) <= 13 and all(r["status"] == "cancelled" for r in cancelled)
    assert all(2 <= r["output_tokens"] <= 6 and r["cancel_at_ns"] == r["chunk_ns"][-1] for r in cancelled)
    assert all(r["status"] == "ok" and r["output_tokens"] == 100 for r in records if r not in cancelled)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["requests"]["planned_cancels"] == len(cancelled)
    assert summary["goodput"]["excluded_planned_cancels"] == len(cancelled)
    assert summary["goodput"]["measured"] == 16 - len(cancelled)
    release = summary["server"]["prometheus"]["cancel_release"]
    assert release["planned_cancels"] == len(cancelled) and release["released"] is True, release
    assert "released the cancelled requests within" in err
    assert run_cli(["report", str(out), "--quiet"]) == 0  # the summary rebuilt from the files says the same
    rebuilt = json.loads((out / "summary.json").read_text())
    assert rebuilt["server"]["prometheus"]["cancel_release"] == release
    assert rebuilt["goodput"] == summary["goodput"] and rebuilt["requests"] == summary["requests"]
