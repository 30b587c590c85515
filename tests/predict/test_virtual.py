"""The virtual-time engine: timings derived by hand, and the scheduler's limits shaping them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from loadgen.predict.step_model import SchedulerLimits, StepModel
from loadgen.predict.virtual import simulate


def _model(**kw: float) -> StepModel:
    return StepModel(fixed_s=0.01, prefill_s=0.001, limits=SchedulerLimits(max_num_batched_tokens=512), **kw)


def test_two_requests_match_the_hand_derived_timeline() -> None:
    # A: 100-token prompt at t=0, 3 tokens; B: 50-token prompt at t=0.05, 2 tokens.
    # step 1 [0, 0.11]: A's prefill (0.01 + 100 × 0.001) → A's first token at 0.11; B arrived meanwhile.
    # step 2 [0.11, 0.17]: A decodes, B's prefill (0.01 + 50 × 0.001) → B's first token at 0.17.
    # step 3 [0.17, 0.18]: both decode (0.01): A's 3rd and B's 2nd token, both finish at 0.18.
    out = simulate(_model(), [list(range(100)), list(range(1000, 1050))], [3, 2], np.array([0.0, 0.05]))
    assert out.ttft_s == pytest.approx([0.11, 0.12])
    assert out.e2e_s == pytest.approx([0.18, 0.13])
    assert out.tpot_s == pytest.approx([0.035, 0.01])
    assert out.output_tokens.tolist() == [3, 2]
    assert out.steps == 3


def test_decode_cost_grows_with_batch_and_kv_tokens() -> None:
    # One request, 10-token prompt, 2 tokens: prefill step 0.01 + 0.01, then one decode step reading 11
    # KV tokens: 0.01 + 1 × 0.002 + 11 × 0.0001.
    out = simulate(_model(decode_seq_s=0.002, decode_kv_s=0.0001), [list(range(10))], [2], np.array([0.0]))
    assert out.e2e_s[0] == pytest.approx(0.02 + 0.01 + 0.002 + 0.0011)


def test_token_budget_chunks_a_long_prompt() -> None:
    # 1,000 prompt tokens with a 512-token budget: two prefill steps (512, then 488).
    out = simulate(_model(), [list(range(1000))], [1], np.array([0.0]))
    assert out.ttft_s[0] == pytest.approx(0.01 + 0.512 + 0.01 + 0.488)
    assert out.steps == 2


def test_idle_engine_jumps_to_the_next_arrival() -> None:
    out = simulate(_model(), [list(range(10)), list(range(100, 110))], [1, 1], np.array([0.0, 5.0]))
    assert out.ttft_s == pytest.approx([0.02, 0.02])
    assert math.isnan(out.tpot_s[0])


def test_a_request_larger_than_the_pool_is_refused() -> None:
    model = StepModel(fixed_s=0.01, limits=SchedulerLimits(num_blocks=2, block_size=16))
    with pytest.raises(ValueError, match="KV pool of 32 tokens"):
        simulate(model, [list(range(40))], [1], np.array([0.0]))


def test_two_replicas_serve_simultaneous_requests_apart() -> None:
    # Two 200-token prompts at t=0. One engine: one step prefills both (0.01 + 400 × 0.001 = 0.41 s).
    # Two replicas, round robin: each prefills one (0.01 + 200 × 0.001 = 0.21 s).
    prompts, offsets = [list(range(200)), list(range(1000, 1200))], np.array([0.0, 0.0])
    assert simulate(_model(), prompts, [1, 1], offsets).ttft_s == pytest.approx([0.41, 0.41])
    two = simulate(_model(), prompts, [1, 1], offsets, replicas=2)
    assert two.ttft_s == pytest.approx([0.21, 0.21])


def test_least_loaded_routing_picks_the_replica_with_fewest_requests() -> None:
    # A (long: 50 tokens) and B arrive at 0 and go to replicas 0 and 1; B ends after its 0.02 s prefill;
    # C at 1.005 s: round robin sends it to replica 0, busy with A's decode (steps of 0.01 s ending at
    # 0.02 + j × 0.01): it joins the step after 1.01, 0.01 + 10 × 0.001 long; least-loaded sends it to idle 1.
    prompts = [list(range(10)), list(range(100, 110)), list(range(200, 210))]
    offsets = np.array([0.0, 0.0, 1.005])
    rr = simulate(_model(), prompts, [500, 1, 1], offsets, replicas=2, routing="round-robin")
    ll = simulate(_model(), prompts, [500, 1, 1], offsets, replicas=2, routing="least-loaded")
    assert ll.ttft_s[2] == pytest.approx(0.02)  # alone on replica 1
    assert rr.ttft_s[2] == pytest.approx(1.01 - 1.005 + 0.02)


def test_prompts_sharing_text_share_token_ids_and_hit_the_prefix_cache() -> None:
    from loadgen.predict.requests import text_token_ids

    system = "You are a careful assistant. " * 20  # 580 bytes
    a, b = text_token_ids(system + "first question?", 300, 2), text_token_ids(system + "second, longer question?", 305, 2)
    assert a[:290] == b[:290] and a[290] != b[290]  # 580 shared bytes at 2 per token: 290 shared ids
    # The shared prefix's full blocks (288 tokens = 18 blocks of 16) are prefilled once: B's prefill is 17 tokens.
    out = simulate(_model(), [a, b], [1, 1], np.array([0.0, 1.0]))
    assert out.ttft_s == pytest.approx([0.01 + 0.300, 0.01 + (305 - 288) * 0.001])
