"""Late prefix-cache registration (refserver.engine.fast_late): a quiet sequence whose first block no other
request has registers the blocks it fills when it wakes, in one call, and the engine's state between runs is
still the step-by-step engine's, also when a request arrives with a late sequence's first block (it makes
that one register at once) and when a late sequence is preempted."""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
import pytest

from loadgen.predict.step_model import SchedulerLimits, StepModel
from loadgen.predict.virtual import make_engine, simulate
from refserver.engine.block_manager import BlockManager
from refserver.engine.fast_decode import FastDecode
from refserver.engine.llm_engine import LLMEngine
from refserver.engine.types import SamplingParams
from tests.predict.test_fast_decode_state import state

PARAMS = SamplingParams(max_tokens=40, ignore_eos=True, temperature=0.0)


def engines(model: StepModel) -> tuple[LLMEngine, LLMEngine]:
    fast, slow = (make_engine(model, max_positions=400, waiting=100, fast=f)[0] for f in (True, False))
    return fast, slow


def test_a_late_sequence_registers_its_filled_blocks_in_one_call_when_it_wakes(monkeypatch: pytest.MonkeyPatch) -> None:
    # One request, 4-token blocks, 9 prompt tokens and 40 output tokens, 48 of them computed: the prompt's 2
    # full blocks registered after its prefill, the 9 filled while it decoded in one call when it wakes for
    # its last step, which fills the last one; step by step, a call for each block as it fills.
    calls: list[int] = []
    original = BlockManager.cache_full_blocks

    def counted(bm: BlockManager, seq: Any) -> None:
        before = len(seq.block_hashes)
        original(bm, seq)
        if len(seq.block_hashes) > before:
            calls.append(len(seq.block_hashes) - before)

    monkeypatch.setattr(BlockManager, "cache_full_blocks", counted)
    model = StepModel(fixed_s=0.01, decode_kv_s=1e-5, limits=SchedulerLimits(block_size=4, num_blocks=100))
    registered = []
    for engine in engines(model):
        calls.clear()
        engine.add_request("0", list(range(100, 109)), PARAMS, 0.0)
        engine.run_until(10.0)
        registered.append(list(calls))
        assert not engine.has_unfinished() and len(engine.block_manager._cached) == 12
    assert registered == [[2, 9, 1], [2] + [1] * 10]


def side_by_side(model: StepModel, arrivals: list[tuple[float, list[int], int]], instants: list[float]) -> None:
    """Both engines fed the same arrivals and run to the same instants, their states compared at each."""
    pair = engines(model)
    pending = sorted(arrivals, key=lambda a: a[0])
    k = 0
    for until in instants:
        for engine in pair:
            if engine.has_unfinished():
                engine.run_until(until)
        while k < len(pending) and pending[k][0] <= until:
            at, prompt, out = pending[k]
            for engine in pair:
                engine.add_request(str(k), prompt, SamplingParams(max_tokens=out, ignore_eos=True), at)
            k += 1
        assert state(pair[0]) == state(pair[1])


class Counts:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.deferred = self.caught_up = 0
        go_quiet, added = FastDecode._go_quiet, FastDecode.added

        def counted_go_quiet(fast: FastDecode, seq: Any, t0: int) -> None:
            go_quiet(fast, seq, t0)
            self.deferred += seq in fast.late

        def counted_added(fast: FastDecode, seq: Any) -> None:
            late = len(fast.late)
            added(fast, seq)
            self.caught_up += late - len(fast.late)

        monkeypatch.setattr(FastDecode, "_go_quiet", counted_go_quiet)
        monkeypatch.setattr(FastDecode, "added", counted_added)


@pytest.mark.parametrize("seed", range(4))
def test_arrivals_sharing_a_late_first_block_leave_the_step_by_step_state(seed: int,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # Prompts drawn from a few heads (some shorter than a block, one ending in the output token) arrive while
    # earlier ones decode late; a pool tight enough to preempt some of them.
    counts = Counts(monkeypatch)
    rng = np.random.default_rng(seed)
    limits = SchedulerLimits(max_num_seqs=6, max_num_batched_tokens=48, block_size=4, num_blocks=60)
    model = StepModel(fixed_s=0.01, prefill_s=1e-4, decode_kv_s=1e-5, limits=limits)
    heads = [[7, 8, 9], [5, 6, 7, 1], [11, 12, 13, 14, 15, 16]] + [[100 + i] * 4 for i in range(6)]
    arrivals = []
    for i in range(40):
        head = heads[int(rng.integers(0, len(heads)))]
        tail = rng.integers(0, 30, size=int(rng.integers(0, 10))).tolist()
        arrivals.append((float(i) * 0.03 + float(rng.uniform(0, 0.02)), head + tail, int(rng.integers(1, 30))))
    side_by_side(model, arrivals, list(np.arange(0.0, 4.0, 0.013)))
    assert counts.deferred > 0 and counts.caught_up > 0


def test_a_late_sequence_preempted_registers_first_and_is_never_late_again() -> None:
    # Long outputs in a pool that cannot hold them all: the last admitted is preempted and recomputed.
    limits = SchedulerLimits(max_num_seqs=4, max_num_batched_tokens=64, block_size=4, num_blocks=24)
    model = StepModel(fixed_s=0.01, decode_kv_s=1e-5, limits=limits)
    arrivals = [(0.0, [200 + i] * 4 + [i], 40) for i in range(4)]
    side_by_side(model, arrivals, [0.05 * k for k in range(1, 80)])
    prompts = [p for _, p, _ in arrivals]
    assert simulate(model, prompts, [40] * 4, np.zeros(4)).preemptions > 0


def test_a_virtual_run_makes_no_garbage_collection_and_leaves_the_collector_as_it_was() -> None:
    collections: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    model = StepModel(fixed_s=0.01, decode_kv_s=1e-5, limits=SchedulerLimits(block_size=4, num_blocks=2000))
    prompts = [[i % 50, i, i + 1, 3, 4, 5] * 3 for i in range(400)]
    gc.collect()  # every generation's count from 0: what re-enabling starts is the youngest's collection,
    # never an older one that earlier tests' allocations had brought due (the test failed in some orders)
    gc.callbacks.append(count)
    try:
        simulate(model, prompts, [30] * 400, np.linspace(0.0, 2.0, 400))
        # none while it ran: at most the one of the youngest objects that turning it back on starts
        assert collections in ([], [0]) and gc.isenabled()
        gc.disable()
        simulate(model, prompts[:5], [3] * 5, np.zeros(5))
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.callbacks.remove(count)


def test_the_fast_decode_forgets_finished_sequences() -> None:
    model = StepModel(fixed_s=0.01, decode_kv_s=1e-5, limits=SchedulerLimits(max_num_seqs=4, num_blocks=2000))
    engine, _ = make_engine(model, max_positions=100, waiting=1000, fast=True)
    for i in range(300):
        engine.add_request(str(i), [i, i + 1, 7, 8], SamplingParams(max_tokens=5, ignore_eos=True), 0.0)
    engine.run_until(1e9)
    assert engine.fast is not None and len(engine.fast.order) <= 2 * 4 + 64


def test_the_virtual_engine_has_no_vocabulary_to_check_but_a_server_engine_does() -> None:
    # The virtual engine only hashes its prompts' ids; an engine that serves a model rejects one past its
    # vocabulary.
    model = StepModel(fixed_s=0.01, limits=SchedulerLimits(block_size=4, num_blocks=100))
    out = simulate(model, [[1 << 40, -3, 5]], [2], np.zeros(1))
    assert out.output_tokens.tolist() == [2]
    engine, runner = make_engine(model, max_positions=10, waiting=1)
    served = LLMEngine(runner, engine.config)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        served.add_request("0", [1 << 40], SamplingParams(max_tokens=2))
