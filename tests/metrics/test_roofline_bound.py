"""The roofline upper bound on requests/s (`goodput plan`'s `throughput` line): its two sides computed
from the step costs they stand for, and how it moves with the workload."""

from __future__ import annotations

import pytest

from metrics.model.presets import GPU_PRESETS, MODEL_PRESETS
from metrics.model.roofline import SeqWork, prefill_cost, request_throughput_bound, step_cost

MODEL, GPU = MODEL_PRESETS["Llama-3.1-8B"], GPU_PRESETS["L4"]


def test_both_sides_from_the_step_costs() -> None:
    prompt, output, batch = 256, 16, 64
    bound = request_throughput_bound(MODEL, GPU, prompt, output, max_batch=batch)
    decode = [step_cost(MODEL, [SeqWork(prompt + k, 1)]) for k in range(output - 1)]
    flops = prefill_cost(MODEL, prompt).flops + sum(c.flops for c in decode)
    one, two = (step_cost(MODEL, [SeqWork(prompt, 1)] * n).bytes for n in (1, 2))
    weights = one - (two - one)  # a step's bytes less what one more sequence adds: the weights it reads once
    kv_and_rows = sum(c.bytes for c in decode) - (output - 1) * weights  # per token: its KV and its embedding row
    assert bound["compute_requests_per_s"] == pytest.approx(GPU.peak_flops / flops)
    assert bound["memory_requests_per_s"] == pytest.approx(
        GPU.bandwidth / ((output - 1) / batch * weights + kv_and_rows), rel=1e-9)
    assert bound["requests_per_s"] == min(bound["compute_requests_per_s"], bound["memory_requests_per_s"])
    assert bound["bound"] == "compute"  # a 256-token prefill per 16 tokens out: compute dominates on an L4


def test_how_the_bound_moves() -> None:
    base = request_throughput_bound(MODEL, GPU, 1024, 256, max_batch=32)
    assert base["bound"] == "memory"  # long decodes at a small batch: the weights are read too often
    wider = request_throughput_bound(MODEL, GPU, 1024, 256, max_batch=256)
    assert wider["memory_requests_per_s"] > base["memory_requests_per_s"]
    cached = request_throughput_bound(MODEL, GPU, 1024, 256, max_batch=32, cached_tokens=768)
    assert cached["compute_requests_per_s"] > base["compute_requests_per_s"]
    half = request_throughput_bound(MODEL, GPU, 1024, 256, max_batch=32, efficiency=0.5)
    assert half["requests_per_s"] == pytest.approx(base["requests_per_s"] / 2)
    one = request_throughput_bound(MODEL, GPU, 1024, 1, max_batch=32)
    assert one["memory_requests_per_s"] is None and one["bound"] == "compute"  # no decode step at all


@pytest.mark.parametrize("kwargs", [{"max_batch": 0}, {"max_batch": 1, "cached_tokens": 256},
                                    {"max_batch": 1, "efficiency": 0.0}])
def test_bad_input(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        request_throughput_bound(MODEL, GPU, 256, 16, **kwargs)  # type: ignore[arg-type]
