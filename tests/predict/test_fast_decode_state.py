"""The fast decode's engine state equals the step-by-step engine's between runs, not only its outcomes: every
sequence's tokens, computed count, block table and hashes, the running and waiting order, the KV pool's free
list (its order), prefix cache and blocks. Checked at many points of a run, in pools tight enough to preempt,
including the two shortcuts that save most events: a block a quiet sequence needs right after filling one
taken first thing in the next step, and sequences finishing inside a stretch of coasting steps."""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
import pytest

from loadgen.predict.step_model import SchedulerLimits, StepModel
from loadgen.predict.virtual import make_engine
from refserver.engine.fast_decode import FastDecode
from refserver.engine.llm_engine import LLMEngine
from refserver.engine.types import SamplingParams
from tests.predict.test_fast_decode import workload


def state(engine: LLMEngine) -> dict[str, Any]:
    """Everything the next steps depend on (a fast engine is first brought up to date: a copy, flushed)."""
    if engine.fast is not None:
        engine = copy.deepcopy(engine)
        assert engine.fast is not None
        engine.fast.flush()
    bm, sched = engine.block_manager, engine.scheduler
    return {
        "clock": engine.clock(), "steps": engine.num_steps, "finished": engine.num_finished,
        "seqs": {rid: (s.token_ids, s.num_computed_tokens, s.block_table, s.block_hashes, s.status)
                 for rid, s in engine.seqs.items()},
        "running": [s.request_id for s in sched.running], "waiting": [s.request_id for s in sched.waiting],
        "free": list(bm._free), "cached": bm._cached,
        "blocks": [(b.ref_count, b.hash, b.token_ids) for b in bm.blocks],
        "preemptions": sched.num_preemptions, "stats": engine.stats(),
    }


class Counts:
    """How often the shortcuts ran: blocks taken at a step's start, sequences finished inside `_coast`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.taken = self.coasted_finishes = 0
        take, coast = FastDecode._take, FastDecode._coast

        def counted_take(fast: FastDecode) -> None:
            self.taken += len(fast._takes)
            take(fast)

        def counted_coast(fast: FastDecode, until_s: float, events: list[Any]) -> None:
            before = sum(fast.engine.num_finished.values())  # type: ignore[attr-defined]
            coast(fast, until_s, events)
            self.coasted_finishes += sum(fast.engine.num_finished.values()) - before  # type: ignore[attr-defined]

        monkeypatch.setattr(FastDecode, "_take", counted_take)
        monkeypatch.setattr(FastDecode, "_coast", counted_coast)


def run_side_by_side(model: StepModel, prompts: list[list[int]], max_tokens: list[int], *, chunks: int,
                     seed: int) -> None:
    """Every request queued at once, then both engines run to the same virtual instants (random ones) with
    run_until, their states compared at each."""
    longest = max(len(p) + m for p, m in zip(prompts, max_tokens, strict=True))
    engines = [make_engine(model, max_positions=longest + 1, waiting=len(prompts), fast=f)[0] for f in (True, False)]
    for engine in engines:
        for i, (p, m) in enumerate(zip(prompts, max_tokens, strict=True)):
            engine.add_request(str(i), p, SamplingParams(max_tokens=m, ignore_eos=True, temperature=0.0), 0.0)
    fast, slow = engines
    rng = np.random.default_rng(seed)
    until = 0.0
    for _ in range(chunks):
        if not fast.has_unfinished() and not slow.has_unfinished():
            break
        until += float(rng.exponential(0.05))
        for engine in engines:
            if engine.has_unfinished():
                engine.run_until(until)
        assert state(fast) == state(slow)
    assert not fast.has_unfinished() and not slow.has_unfinished()
    fast.run_until(math.inf)  # nothing left: no step, no change


@pytest.mark.parametrize("seed", range(6))
def test_the_fast_engine_state_is_the_step_by_step_one_between_runs(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    counts = Counts(monkeypatch)
    for tight in (True, False):
        model, prompts, max_tokens, _ = workload(seed, caching=True, tight=tight)
        run_side_by_side(model, prompts, max_tokens, chunks=400, seed=seed)
    assert counts.taken > 0 and counts.coasted_finishes > 0  # both shortcuts ran


def test_a_block_is_taken_ahead_only_when_the_pool_holds_one_for_each() -> None:
    # Eight sequences fill their blocks in the same steps, in a pool with fewer free blocks than that: the
    # next step preempts, as step by step.
    limits = SchedulerLimits(max_num_seqs=8, max_num_batched_tokens=64, block_size=4, num_blocks=20)
    model = StepModel(fixed_s=0.01, decode_kv_s=1e-5, limits=limits)
    prompts = [[100 + i] * 3 + [i] for i in range(8)]  # 4 tokens, one full block each
    run_side_by_side(model, prompts, [12] * 8, chunks=200, seed=1)


def test_a_block_is_taken_ahead_only_when_the_budget_reaches_every_sequence() -> None:
    # More running sequences than tokens per step: the budget cuts some of them short each step, and those
    # take no block (as step by step).
    limits = SchedulerLimits(max_num_seqs=8, max_num_batched_tokens=5, block_size=2, num_blocks=200)
    model = StepModel(fixed_s=0.01, decode_kv_s=1e-5, limits=limits)
    prompts = [[100 + i, i] for i in range(8)]  # 2 tokens, one full block each
    run_side_by_side(model, prompts, [9] * 8, chunks=300, seed=2)
