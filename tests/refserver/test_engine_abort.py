"""Aborts free every block: mid-prefill, mid-decode, while waiting or preempted, and via the async engine."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

import pytest

torch = pytest.importorskip("torch")
torch.set_num_threads(1)  # the tiny model's ops are too small to share; threads only contend

from refserver.engine.async_engine import AsyncLLMEngine  # noqa: E402
from refserver.engine.llm_engine import LLMEngine  # noqa: E402
from refserver.engine.types import SamplingParams  # noqa: E402


def assert_all_blocks_free(engine: LLMEngine) -> None:
    bm = engine.block_manager
    assert bm.num_free_blocks == bm.num_total_blocks
    assert all(b.ref_count == 0 for b in bm.blocks)
    assert not engine.scheduler.running and not engine.scheduler.waiting and not engine.seqs


def test_many_aborts_mid_prefill_and_mid_decode_leak_nothing(make_engine: Callable[..., LLMEngine]) -> None:
    rng = random.Random(0)
    shared = [rng.randrange(256) for _ in range(12)]  # shared prefixes put ref counts above 1
    engine = make_engine(num_blocks=40, budget=10, block_size=4)
    phases = {"waiting": 0, "prefill": 0, "decode": 0}
    next_id = 0
    for _ in range(300):
        while len(engine.seqs) < 10:
            prompt = shared + [rng.randrange(256) for _ in range(rng.randrange(1, 30))]
            engine.add_request(f"r{next_id}", prompt, SamplingParams(max_tokens=20, temperature=0.0, ignore_eos=True))
            next_id += 1
        engine.step()
        for rid in rng.sample(sorted(engine.seqs), k=min(2, len(engine.seqs))):
            seq = engine.seqs[rid]
            if rng.random() < 0.5:
                continue
            phase = "waiting" if not seq.block_table else "decode" if seq.num_output_tokens else "prefill"
            phases[phase] += 1
            event = engine.abort(rid)
            assert event is not None and event.finished and event.finish_reason == "abort"
            assert engine.abort(rid) is None  # idempotent
    assert phases["prefill"] > 5 and phases["decode"] > 5, phases
    assert engine.scheduler.num_preemptions > 0
    for rid in sorted(engine.seqs):
        engine.abort(rid)
    assert_all_blocks_free(engine)


def test_unknown_abort_is_ignored(make_engine: Callable[..., LLMEngine]) -> None:
    engine = make_engine(num_blocks=8, budget=8, block_size=4)
    assert engine.abort("nope") is None


async def test_consumer_leaving_early_frees_blocks(make_engine: Callable[..., LLMEngine]) -> None:
    engine = AsyncLLMEngine(make_engine(num_blocks=64, budget=16, block_size=4))
    await engine.start()
    try:
        params = SamplingParams(max_tokens=1000, temperature=0.0, ignore_eos=True)
        streams = [engine.generate(f"r{i}", list(range(1, 40 + i)), params) for i in range(6)]
        for stream in streams:
            async for event in stream:
                if event.new_token_ids:
                    break  # leaves the generator; its cleanup aborts the request
            await stream.aclose()  # type: ignore[attr-defined]
        explicit = engine.generate("explicit", list(range(50)), params)
        first = await anext(explicit)
        engine.abort("explicit")
        rest = [e async for e in explicit]
        assert not first.finished and rest[-1].finished and rest[-1].finish_reason == "abort"
        for _ in range(200):  # the engine thread applies aborts at its next step
            if engine.stats().num_free_blocks == 64 and engine.stats().num_running == 0:
                break
            await asyncio.sleep(0.05)
        assert engine.stats().num_free_blocks == 64
        assert engine.engine.num_finished == {"abort": 7}  # none ran to its length limit
        assert engine.stats().num_running == 0 and engine.stats().num_waiting == 0
    finally:
        await engine.stop()


