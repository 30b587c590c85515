"""Lazy registration in the fast decode (refserver.engine.fast_decode): a quiet sequence whose first block no
other sequence has registers its filled blocks when it wakes, not as each fills; a request arriving with the
same first block catches it up at once, so the prefix cache it can look up is the step-by-step engine's."""

from __future__ import annotations

from loadgen.predict.step_model import SchedulerLimits, StepModel
from loadgen.predict.virtual import make_engine
from refserver.engine import SamplingParams

MODEL = StepModel(fixed_s=0.01, decode_seq_s=1e-4,
                  limits=SchedulerLimits(max_num_seqs=4, max_num_batched_tokens=64, block_size=4, num_blocks=200))


def params() -> SamplingParams:
    return SamplingParams(max_tokens=40, ignore_eos=True, temperature=0.0)


def test_a_lazy_sequence_registers_its_blocks_when_one_with_its_first_block_arrives() -> None:
    engine, _ = make_engine(MODEL, max_positions=200, waiting=10, fast=True)
    fast = engine.fast
    assert fast is not None
    engine.add_request("a", [5, 6, 7, 8, 9, 10], params(), arrival_s=0.0)
    engine.run_until(0.25)  # ~24 steps of 10 ms: a decodes quietly, filling blocks
    seq = engine.seqs["a"]
    assert seq in fast.lazy
    behind = len(seq.block_hashes)
    full = (seq.num_prompt_tokens + 12) // 4  # blocks it has filled by now, at least
    assert behind < full  # filled blocks not registered yet
    engine.add_request("b", [5, 6, 7, 8, 1], params(), arrival_s=engine.clock())
    assert seq not in fast.lazy
    assert len(seq.block_hashes) == seq.num_computed_tokens // 4 >= full  # caught up, as the step engine has it
    cached = engine.block_manager._cached
    assert all(cached[h] == seq.block_table[i] for i, h in enumerate(seq.block_hashes))


def test_a_sequence_sharing_its_first_block_is_not_lazy() -> None:
    engine, _ = make_engine(MODEL, max_positions=200, waiting=10, fast=True)
    fast = engine.fast
    assert fast is not None
    engine.add_request("a", [5, 6, 7, 8, 9, 10], params(), arrival_s=0.0)
    engine.add_request("b", [5, 6, 7, 8, 11], params(), arrival_s=0.0)
    engine.run_until(0.2)
    assert not fast.lazy
    assert all(len(s.block_hashes) == s.num_computed_tokens // 4 for s in engine.seqs.values() if s not in fast.quiet)
