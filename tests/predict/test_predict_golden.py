"""The predictor's outcomes stay exactly the recorded ones: the fast decode and its coasting are optimised
for speed (bench/predict_speed.py), and a change that moves a single float of any request's TTFT, E2E, TPOT,
longest gap or tokens, or the steps or preemptions, fails here. The digests were recorded from the engine
before those optimisations (tests/fixtures/predict-golden/outcomes.json); tests/predict/test_fast_decode.py
holds the fast decode equal to the step-by-step engine on small random workloads.

To record again after a change that is meant to move the predictions: `python -m tests.predict.test_predict_golden`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from loadgen.predict.step_model import SchedulerLimits, StepModel
from loadgen.predict.virtual import Outcome, Routing, simulate

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "predict-golden" / "outcomes.json"
BENCH_LIMITS = SchedulerLimits(max_num_seqs=64, max_num_batched_tokens=512, num_blocks=4000)


def digest(out: Outcome) -> str:
    h = hashlib.sha256()
    for a in (out.ttft_s, out.e2e_s, out.tpot_s, out.max_itl_s):
        h.update(np.ascontiguousarray(a, dtype="<f8").tobytes())
    h.update(np.ascontiguousarray(out.output_tokens, dtype="<i8").tobytes())
    h.update(repr((out.duration_s, out.steps, out.preemptions)).encode())
    return h.hexdigest()


def bench_case(rate: float, n: int) -> Outcome:
    """The speed bench's workload, smaller: 256 → 128 tokens, Poisson arrivals, prefix caching on."""
    rng = np.random.default_rng(7)
    model = StepModel(fixed_s=0.0903, prefill_s=1.9e-5, decode_seq_s=6e-6, limits=BENCH_LIMITS)  # predict_speed.py's
    prompts = rng.integers(2, 50_000, size=(n, 256)).tolist()
    offsets = rng.exponential(1 / rate, n).cumsum()
    return simulate(model, prompts, [128] * n, offsets - offsets[0])


def shared_case(seed: int, *, caching: bool, replicas: int, routing: Routing, num_blocks: int) -> Outcome:
    """Prompts sharing a few long prefixes (some identical, some holding the output token), mixed output
    lengths, a pool small enough to evict cached blocks and to preempt, a budget that chunks prefills."""
    rng = np.random.default_rng(seed)
    model = StepModel(fixed_s=0.02, prefill_s=4e-5, prefill_ctx_s=1e-9, decode_seq_s=2e-4, decode_kv_s=2e-7,
                      limits=SchedulerLimits(max_num_seqs=24, max_num_batched_tokens=192, block_size=8,
                                             num_blocks=num_blocks, enable_prefix_caching=caching))
    heads = [rng.integers(0, 40, size=int(rng.integers(40, 300))).tolist() for _ in range(5)]
    prompts: list[list[int]] = []
    for _ in range(700):
        head = heads[int(rng.integers(0, len(heads)))]
        if rng.random() < 0.15 and prompts:  # a repeat of an earlier prompt
            prompts.append(list(prompts[int(rng.integers(0, len(prompts)))]))
            continue
        tail = rng.integers(0, 40, size=int(rng.integers(1, 120))).tolist()
        prompts.append(head[: int(rng.integers(0, len(head) + 1))] + tail)
    max_tokens = rng.integers(1, 90, size=len(prompts)).tolist()
    offsets = rng.exponential(1 / 60, len(prompts)).cumsum()
    return simulate(model, prompts, max_tokens, offsets - offsets[0], replicas=replicas, routing=routing)


CASES: dict[str, Callable[[], Outcome]] = {
    "bench-rate-2": lambda: bench_case(2.0, 600),
    "bench-rate-8": lambda: bench_case(8.0, 900),
    "shared-caching": lambda: shared_case(1, caching=True, replicas=1, routing="round-robin", num_blocks=220),
    "shared-no-caching": lambda: shared_case(2, caching=False, replicas=1, routing="round-robin", num_blocks=260),
    "shared-replicas": lambda: shared_case(3, caching=True, replicas=2, routing="least-loaded", num_blocks=200),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_predictions_are_the_recorded_ones(name: str) -> None:
    recorded = json.loads(RECORDED.read_text())[name]
    out = CASES[name]()
    assert (out.steps, out.preemptions) == (recorded["steps"], recorded["preemptions"])
    assert digest(out) == recorded["digest"]


def test_the_cases_cover_eviction_preemption_and_hits() -> None:
    recorded = json.loads(RECORDED.read_text())
    assert recorded["shared-caching"]["preemptions"] > 0 and recorded["shared-replicas"]["preemptions"] > 0
    assert recorded["bench-rate-8"]["steps"] > 0


if __name__ == "__main__":
    RECORDED.write_text(json.dumps({name: {"digest": digest(o), "steps": o.steps, "preemptions": o.preemptions}
                                    for name, o in ((n, f()) for n, f in sorted(CASES.items()))}, indent=1) + "\n")
