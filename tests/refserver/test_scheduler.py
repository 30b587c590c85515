"""Scheduler: token budget, decode-first order, chunked prefill, max_num_seqs, preemption, queue bound."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from metrics.model.config import ModelConfig
from refserver.engine.async_engine import AsyncLLMEngine
from refserver.engine.config import EngineConfig
from refserver.engine.llm_engine import LLMEngine
from refserver.engine.runner_base import ScheduledBatch
from refserver.engine.types import QueueFullError, SamplingParams
from refserver.model.config import tiny_config

FILLER = 65  # never the tiny model's eos


class RecordingRunner:
    """A ModelRunner that computes nothing: it records each batch and samples a filler token."""

    def __init__(self, num_blocks: int) -> None:
        self._num_blocks = num_blocks
        self.batches: list[list[tuple[str, int, int, bool]]] = []  # (request, start_pos, n tokens, sample)

    @property
    def model_config(self) -> ModelConfig:
        return tiny_config()

    @property
    def num_blocks(self) -> int:
        return self._num_blocks

    def execute(self, batch: ScheduledBatch) -> list[int]:
        for s in batch.seqs:
            assert s.context_len <= len(s.block_table) * 4, "block table does not cover the step's positions"
        self.batches.append([(s.seq.request_id, s.start_pos, len(s.token_ids), s.sample) for s in batch.seqs])
        return [FILLER] * batch.num_samples


def make(
    num_blocks: int = 64, budget: int = 16, max_num_seqs: int = 8, max_waiting: int = 100, caching: bool = True
) -> tuple[LLMEngine, RecordingRunner]:
    runner = RecordingRunner(num_blocks)
    config = EngineConfig(
        block_size=4, num_blocks=num_blocks, max_num_batched_tokens=budget, max_num_seqs=max_num_seqs,
        max_waiting=max_waiting, enable_prefix_caching=caching,
    )
    return LLMEngine(runner, config), runner


def params(n: int) -> SamplingParams:
    return SamplingParams(max_tokens=n, temperature=0.0)


def drain(engine: LLMEngine) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for _ in range(10_000):
        if not engine.has_unfinished():
            return out
        for rid, event in engine.step():
            out.setdefault(rid, []).extend(event.new_token_ids)
    raise AssertionError("engine made no progress")


def test_budget_is_respected_and_prefill_is_chunked_contiguously() -> None:
    engine, runner = make(budget=10)
    engine.add_request("long", list(range(37)), params(3))
    engine.add_request("short", list(range(5)), params(3))
    out = drain(engine)
    assert out == {"long": [FILLER] * 3, "short": [FILLER] * 3}
    assert all(sum(n for _, _, n, _ in batch) <= 10 for batch in runner.batches)
    chunks = [(start, n, sample) for batch in runner.batches for rid, start, n, sample in batch if rid == "long"]
    prefill = [c for c in chunks if c[0] < 37]
    assert [c[0] for c in prefill] == [0, 10, 20, 30]  # contiguous, cut mid-block (block size 4)
    assert sum(c[1] for c in prefill) == 37
    assert [c[2] for c in prefill] == [False, False, False, True]  # only the last chunk samples
    assert [c[:2] for c in chunks[len(prefill) :]] == [(37, 1), (38, 1)]  # decode feeds the sampled token


def test_running_decodes_come_before_new_prefills() -> None:
    engine, runner = make(budget=8)
    engine.add_request("a", list(range(6)), params(5))
    engine.step()
    engine.add_request("b", list(range(100, 130)), params(2))
    engine.step()
    assert runner.batches[-1] == [("a", 6, 1, True), ("b", 0, 7, False)]


def test_max_num_seqs_bounds_running() -> None:
    engine, runner = make(budget=100, max_num_seqs=3)
    for i in range(5):
        engine.add_request(f"r{i}", [1, 2, 3], params(4))
    engine.step()
    assert len(runner.batches[0]) == 3 and engine.stats().num_running == 3 and engine.stats().num_waiting == 2
    drain(engine)
    assert max(len(b) for b in runner.batches) == 3


@pytest.mark.parametrize("caching", [False, True])
def test_preemption_recomputes_generated_tokens_too(caching: bool) -> None:
    # 6 blocks of 4 = 24 slots; two sequences of 8 prompt tokens growing to 20 each cannot both fit.
    engine, runner = make(num_blocks=6, budget=32, caching=caching)
    engine.add_request("first", list(range(8)), params(12))
    engine.add_request("second", list(range(100, 108)), params(12))
    out = drain(engine)
    assert out == {"first": [FILLER] * 12, "second": [FILLER] * 12}
    assert engine.stats().num_preemptions >= 1
    # The later sequence was the victim; it restarted from position 0 with its generated tokens included.
    steps = [(start, n) for b in runner.batches for rid, start, n, _ in b if rid == "second"]
    restarts = [cur for prev, cur in itertools.pairwise(steps) if cur[0] < prev[0] + prev[1]]
    assert restarts, steps
    start, n = restarts[0]
    assert start + n > 8  # the recompute covers generated tokens, not just the prompt
    assert start == 0 if not caching else start % 4 == 0  # with caching, its own full blocks may be revived
    assert engine.block_manager.num_free_blocks == 6


def test_queue_full_past_max_waiting() -> None:
    engine, _ = make(max_waiting=3)
    for i in range(3):
        engine.add_request(f"r{i}", [1, 2], params(1))
    with pytest.raises(QueueFullError):
        engine.add_request("r3", [1, 2], params(1))
    engine.step()  # the queue drains into running, so there is room again
    engine.add_request("r3", [1, 2], params(1))


async def test_async_generate_raises_queue_full_before_any_event() -> None:
    engine = AsyncLLMEngine(make(max_waiting=2)[0])
    await engine.start()
    try:
        with engine._cond:  # hold the engine thread at its inbox so nothing is scheduled meanwhile
            a = engine.generate("a", [1, 2], params(2))
            b = engine.generate("b", [1, 2], params(2))
            with pytest.raises(QueueFullError):
                engine.generate("c", [1, 2], params(2))
        assert [e.finished async for e in a][-1] and [e.finished async for e in b][-1]
    finally:
        await engine.stop()


@pytest.mark.parametrize(
    ("prompt", "p", "match"),
    [
        ([], params(1), "at least one token"),
        ([1, 2, 999], params(1), "outside the vocabulary"),
        (list(range(200)) * 25, params(1), "context holds"),
        ([1], params(0), "max_tokens"),
        ([1], SamplingParams(top_p=0.0), "top_p"),
        ([1], SamplingParams(temperature=-1.0), "temperature"),
        ([1], SamplingParams(max_tokens=2, min_tokens=3), "min_tokens"),
    ],
)
def test_invalid_requests_are_refused_clearly(prompt: list[int], p: SamplingParams, match: str) -> None:
    engine, _ = make(num_blocks=2000)
    with pytest.raises(ValueError, match=match):
        engine.add_request("x", prompt, p)


def test_context_limit_ends_generation_with_length() -> None:
    engine, _ = make(num_blocks=4)  # 16 slots: the pool caps the context below the model's 4096
    assert engine.max_context == 16
    engine.add_request("r", list(range(10)), params(100))
    out = drain(engine)
    assert len(out["r"]) == 6
    assert engine.num_finished == {"length": 1}


def test_duplicate_request_id_is_refused() -> None:
    engine, _ = make()
    engine.add_request("r", [1], params(1))
    with pytest.raises(ValueError, match="already"):
        engine.add_request("r", [1], params(1))


async def test_async_engine_streams_events_in_order() -> None:
    engine = AsyncLLMEngine(make(budget=5)[0])
    await engine.start()
    try:
        events = [e async for e in engine.generate("r", list(range(12)), params(4))]
        assert [t for e in events for t in e.new_token_ids] == [FILLER] * 4
        assert [e.finished for e in events] == [False, False, False, True]
        assert events[-1].finish_reason == "length" and events[-1].num_prompt_tokens == 12
        first = events[0]
        assert first.scheduled_s is not None and first.first_token_s is not None
        assert first.arrival_s <= first.scheduled_s <= first.first_token_s <= events[-1].now_s
        await asyncio.sleep(0)
        assert engine.stats().num_free_blocks == 64
    finally:
        await engine.stop()


def test_sampled_token_is_generated_before_it_is_computed() -> None:
    # Seed F4: after a step samples token d, d is in the sequence but its KV is not yet in the cache.
    engine, runner = make(budget=100)
    engine.add_request("r", [1, 2, 3], params(3))
    engine.step()
    seq = engine.seqs["r"]
    assert seq.num_tokens == 4 and seq.num_computed_tokens == 3 and seq.num_pending_tokens == 1
    engine.step()
    assert runner.batches[-1] == [("r", 3, 1, True)]  # the decode step feeds d at position 3
    assert seq.num_tokens == 5 and seq.num_computed_tokens == 4
