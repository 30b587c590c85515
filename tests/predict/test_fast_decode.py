"""The virtual engine's fast decode (refserver.engine.fast_decode) gives exactly the step-by-step engine's
outcomes: every request's TTFT, E2E, TPOT, longest gap and tokens, the steps and the preemptions."""

from __future__ import annotations

import numpy as np
import pytest

from loadgen.predict.step_model import SchedulerLimits, StepModel
from loadgen.predict.virtual import Outcome, Routing, make_engine, simulate

ARRAYS = ("ttft_s", "e2e_s", "tpot_s", "max_itl_s", "output_tokens")


def assert_same(slow: Outcome, fast: Outcome) -> None:
    for name in ARRAYS:
        a, b = getattr(slow, name), getattr(fast, name)
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), name
    assert (slow.duration_s, slow.steps, slow.preemptions) == (fast.duration_s, fast.steps, fast.preemptions)


def workload(seed: int, *, caching: bool, tight: bool) -> tuple[StepModel, list[list[int]], list[int], np.ndarray]:
    """Random prompts (some sharing a prefix), output lengths and Poisson arrivals; with `tight`, a KV pool
    small enough to preempt, a small token budget (chunked prefills, decodes cut short) and tiny blocks."""
    rng = np.random.default_rng(seed)
    bs = int(rng.choice([1, 2, 4])) if tight else 16
    limits = SchedulerLimits(max_num_seqs=int(rng.integers(2, 12)),
                             max_num_batched_tokens=int(rng.integers(4, 64)) if tight else 256, block_size=bs,
                             num_blocks=(int(rng.integers(100, 300)) if tight else 4000) // bs,
                             enable_prefix_caching=caching)
    model = StepModel(fixed_s=0.01, prefill_s=1e-4, prefill_ctx_s=1e-8, decode_seq_s=3e-4, decode_kv_s=1e-5,
                      limits=limits)
    shared = rng.integers(0, 50, size=64).tolist()
    prompts, max_tokens = [], []
    for _ in range(int(rng.integers(20, 60))):
        out = int(rng.integers(1, 40))
        length = int(rng.integers(1, 80))
        head = shared[: int(rng.integers(0, min(length, 64) + 1))] if rng.random() < 0.5 else []
        prompts.append(head + rng.integers(0, 1000, size=length - len(head)).tolist())
        max_tokens.append(out)
    offsets = rng.exponential(0.02, len(prompts)).cumsum()
    return model, prompts, max_tokens, offsets - offsets[0]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("caching", [True, False])
@pytest.mark.parametrize("tight", [True, False])
def test_fast_decode_gives_the_step_by_step_outcomes(seed: int, caching: bool, tight: bool) -> None:
    model, prompts, max_tokens, offsets = workload(seed, caching=caching, tight=tight)
    slow = simulate(model, prompts, max_tokens, offsets, fast=False)
    fast = simulate(model, prompts, max_tokens, offsets)
    assert_same(slow, fast)


def test_the_tight_workloads_preempt_and_chunk() -> None:
    # What the equality above covers: preemptions, and prompts longer than a step's budget.
    preempting = sum(simulate(*workload(s, caching=True, tight=True), fast=False).preemptions > 0 for s in range(6))
    assert preempting >= 3
    model, prompts, _, _ = workload(0, caching=True, tight=True)
    assert max(len(p) for p in prompts) > model.limits.max_num_batched_tokens


@pytest.mark.parametrize("routing", ["round-robin", "least-loaded"])
def test_fast_decode_gives_the_same_outcomes_over_replicas(routing: Routing) -> None:
    for seed in range(3):
        model, prompts, max_tokens, offsets = workload(seed, caching=True, tight=seed == 1)
        slow = simulate(model, prompts, max_tokens, offsets, replicas=3, routing=routing, fast=False)
        assert_same(slow, simulate(model, prompts, max_tokens, offsets, replicas=3, routing=routing))


def test_identical_prompts_register_the_same_blocks_in_the_same_order() -> None:
    # Equal prompts decoding side by side fill blocks of equal content in the same step: the first in batch
    # order keeps the cache entry; a later request's prefix hits depend on which one it was.
    model = StepModel(fixed_s=0.01, prefill_s=1e-4, decode_kv_s=1e-5,
                      limits=SchedulerLimits(max_num_seqs=4, block_size=2, num_blocks=60))
    prompts = [[5, 6, 7]] * 6 + [[5, 6, 7] + [1] * 8]
    offsets = np.array([0.0, 0.0, 0.001, 0.002, 0.3, 0.3, 0.31])
    max_tokens = [12, 9, 12, 7, 3, 5, 2]
    assert_same(simulate(model, prompts, max_tokens, offsets, fast=False), simulate(model, prompts, max_tokens, offsets))


def test_decodes_go_quiet_and_the_engine_state_matches_step_by_step() -> None:
    # Mid-run, the fast engine's blocks, prefix cache and (once brought up to date) sequences are the slow one's.
    model, prompts, max_tokens, _ = workload(3, caching=True, tight=False)
    fast, _ = make_engine(model, max_positions=200, waiting=100, fast=True)
    slow, _ = make_engine(model, max_positions=200, waiting=100)
    for engine in (fast, slow):
        for i, (p, m) in enumerate(zip(prompts[:8], max_tokens[:8], strict=True)):
            from refserver.engine.types import SamplingParams

            engine.add_request(str(i), p, SamplingParams(max_tokens=m + 20, ignore_eos=True, temperature=0.0))
        for _ in range(12):
            engine.step()
    assert fast.fast is not None and fast.fast.quiet  # decoding sequences were skipped step by step
    fast.fast.flush()
    assert fast.block_manager._cached == slow.block_manager._cached
    assert list(fast.block_manager._free) == list(slow.block_manager._free)
    for rid, seq in slow.seqs.items():
        other = fast.seqs[rid]
        assert (other.token_ids, other.num_computed_tokens, other.block_table, other.block_hashes) == \
            (seq.token_ids, seq.num_computed_tokens, seq.block_table, seq.block_hashes)


def test_abort_brings_quiet_sequences_up_to_date() -> None:
    from refserver.engine.types import SamplingParams

    model, prompts, _, _ = workload(2, caching=False, tight=False)
    engines = [make_engine(model, max_positions=300, waiting=10, fast=fast)[0] for fast in (True, False)]
    for engine in engines:
        for i in range(3):
            engine.add_request(str(i), prompts[i], SamplingParams(max_tokens=100, ignore_eos=True))
        for _ in range(20):
            engine.step()
    fast, slow = engines
    event = fast.abort("1")
    assert event is not None and event.finish_reason == "abort"
    slow.abort("1")
    assert [(s.num_output_tokens, s.num_computed_tokens) for s in fast.seqs.values()] == \
        [(s.num_output_tokens, s.num_computed_tokens) for s in slow.seqs.values()]
    assert fast.stats() == slow.stats()


def test_decoding_sequences_are_not_scheduled_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    # What makes it fast: a sequence is scheduled as an item for its prefill and its last step, not for each
    # of its 200 tokens (the same outcomes, as above).
    from refserver.engine.scheduler import Scheduler

    counts = {"items": 0}
    original = Scheduler._scheduled

    def counted(self: Scheduler, seq: object, n: int) -> object:
        counts["items"] += 1
        return original(self, seq, n)  # type: ignore[arg-type]

    monkeypatch.setattr(Scheduler, "_scheduled", counted)
    model = StepModel(fixed_s=0.01, decode_kv_s=1e-6, limits=SchedulerLimits(max_num_seqs=8, num_blocks=1000))
    prompts, offsets = [list(range(i * 100, i * 100 + 50)) for i in range(20)], np.linspace(0.0, 5.0, 20)
    slow = simulate(model, prompts, [200] * 20, offsets, fast=False)
    slow_items, counts["items"] = counts["items"], 0
    assert_same(slow, simulate(model, prompts, [200] * 20, offsets))
    assert slow_items >= 20 * 200 and counts["items"] <= 20 * 3
