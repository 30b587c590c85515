"""The async engine runs its steps off the event loop: an asyncio ticker keeps ticking while it works."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

torch = pytest.importorskip("torch")
torch.set_num_threads(1)  # the tiny model's ops are too small to share; threads only contend

from metrics.model.config import ModelConfig  # noqa: E402
from refserver.engine import EngineConfig, build_engine  # noqa: E402
from refserver.engine.async_engine import AsyncLLMEngine  # noqa: E402
from refserver.engine.llm_engine import LLMEngine  # noqa: E402
from refserver.engine.runner import TorchModelRunner  # noqa: E402
from refserver.engine.runner_base import ScheduledBatch  # noqa: E402
from refserver.engine.types import AsyncEngine, SamplingParams  # noqa: E402

STEP_S = 0.4


class SlowRunner:
    """The real torch runner, plus a blocking pause per step: a step a blocked loop could not hide."""

    def __init__(self, inner: TorchModelRunner) -> None:
        self.inner = inner
        self.pauses: list[tuple[float, float]] = []  # (start, end) of each step's pause: the runner's own log

    @property
    def model_config(self) -> ModelConfig:
        return self.inner.model_config

    @property
    def num_blocks(self) -> int:
        return self.inner.num_blocks

    def execute(self, batch: ScheduledBatch) -> list[int]:
        start = time.perf_counter()
        time.sleep(STEP_S)
        self.pauses.append((start, time.perf_counter()))
        return self.inner.execute(batch)


async def test_event_loop_keeps_ticking_while_the_engine_steps(model: Any) -> None:
    runner = SlowRunner(TorchModelRunner(model, num_blocks=32, block_size=16))
    engine = AsyncLLMEngine(LLMEngine(runner, EngineConfig(num_blocks=32)))
    ticks: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        while not done.is_set():
            ticks.append(time.perf_counter())
            await asyncio.sleep(0.01)

    await engine.start()
    task = asyncio.create_task(ticker())
    try:
        t0 = time.perf_counter()
        params = SamplingParams(max_tokens=5, temperature=0.0, ignore_eos=True)
        events = [e async for e in engine.generate("r", list(range(1, 30)), params)]
        busy_s = time.perf_counter() - t0
    finally:
        done.set()
        await task
        await engine.stop()
    assert sum(len(e.new_token_ids) for e in events) == 5
    assert busy_s >= 5 * STEP_S
    # A loop blocked by a step could not tick during it: each step's pause, as the runner logged it, holds
    # ticks. (Measured against the runner's own log, not a bound on the gaps, which a loaded host widens.)
    assert len(runner.pauses) >= 5
    for start, end in runner.pauses:
        assert any(start < t < end for t in ticks), (start, end)


async def test_build_engine_satisfies_the_protocol_and_serves() -> None:
    engine: AsyncEngine = build_engine(EngineConfig(device="cpu", num_blocks=64, max_num_batched_tokens=32))
    assert isinstance(engine, AsyncLLMEngine)
    assert engine.vocab_size == 261 and engine.eos_token_id == 257 and engine.max_context == 64 * 16
    await engine.start()
    try:
        params = SamplingParams(max_tokens=8, temperature=0.0, ignore_eos=True)
        results = await asyncio.gather(*[_collect(engine, f"r{i}", list(range(i + 1, i + 50)), params) for i in range(4)])
        for tokens, reason in results:
            assert len(tokens) == 8 and reason == "length"
        with pytest.raises(ValueError, match="vocabulary"):
            engine.generate("bad", [100_000], params)
        stats = engine.stats()
        assert stats.num_total_blocks == 64 and stats.prefix_queries_tokens == 4 * 49
    finally:
        await engine.stop()


async def test_stop_ends_open_streams_with_abort() -> None:
    engine = build_engine(EngineConfig(device="cpu", num_blocks=256, max_num_batched_tokens=32))
    await engine.start()
    stream = engine.generate("r", [1, 2, 3], SamplingParams(max_tokens=4000, temperature=0.0, ignore_eos=True))
    first = await anext(stream)
    assert not first.finished
    await engine.stop()
    rest = [e async for e in stream]
    assert rest[-1].finished and rest[-1].finish_reason == "abort"


async def _collect(engine: AsyncEngine, rid: str, prompt: list[int], params: SamplingParams) -> tuple[list[int], Any]:
    tokens: list[int] = []
    reason = None
    async for event in engine.generate(rid, prompt, params):
        tokens.extend(event.new_token_ids)
        reason = event.finish_reason
    return tokens, reason


class FlakyRunner:
    """Fails its first `failures` steps, then samples a filler token: a runner error must not kill the engine."""

    def __init__(self, failures: int) -> None:
        self.failures = failures

    @property
    def model_config(self) -> ModelConfig:
        from refserver.model import tiny_config

        return tiny_config()

    @property
    def num_blocks(self) -> int:
        return 16

    def execute(self, batch: ScheduledBatch) -> list[int]:
        if self.failures > 0:
            self.failures -= 1
            raise RuntimeError("simulated device error")
        return [65] * batch.num_samples


async def test_a_failing_step_ends_requests_with_error_and_the_engine_recovers() -> None:
    engine = AsyncLLMEngine(LLMEngine(FlakyRunner(failures=1), EngineConfig(num_blocks=16)))
    await engine.start()
    try:
        params = SamplingParams(max_tokens=3, temperature=0.0)
        failed = [e async for e in engine.generate("a", [1, 2, 3], params)]
        assert failed[-1].finished and failed[-1].finish_reason == "error"
        ok = [e async for e in engine.generate("b", [1, 2, 3], params)]
        assert [t for e in ok for t in e.new_token_ids] == [65, 65, 65] and ok[-1].finish_reason == "length"
        assert engine.stats().num_free_blocks == 16
    finally:
        await engine.stop()


async def test_a_request_taken_from_the_inbox_still_counts_against_the_waiting_limit() -> None:
    """Between the engine thread draining the inbox and publishing its next count, the drained requests are
    in neither figure the caller reads: a second caller must still be refused there, at once (429), not
    accepted and then failed in the thread (an error answer, a 500)."""
    import threading

    from refserver.engine.types import QueueFullError

    engine = build_engine(EngineConfig(device="cpu", num_blocks=64, max_num_seqs=1, max_waiting=1))
    inner = engine.engine
    entered, release = threading.Event(), threading.Event()
    add = inner.add_request

    def held_add(*args: Any, **kwargs: Any) -> None:  # the thread has drained the inbox, not yet added
        entered.set()
        release.wait(10)
        add(*args, **kwargs)

    inner.add_request = held_add  # type: ignore[method-assign]
    await engine.start()
    try:
        params = SamplingParams(max_tokens=2, temperature=0.0, ignore_eos=True)
        first = engine.generate("a", [1, 2, 3], params)
        assert await asyncio.to_thread(entered.wait, 10)
        with pytest.raises(QueueFullError):
            engine.generate("b", [1, 2, 3], params)
        release.set()
        events = [event async for event in first]
        assert events[-1].finish_reason == "length"
    finally:
        release.set()
        await engine.stop()
