"""Roofline cost of one engine step: FLOPs, bytes moved, and the time bound.

A step is a list of `SeqWork`: for each sequence, how many tokens are already in its KV cache
(`context`), how many it computes now (`new`: 1 for a decode token, a chunk for prefill) and whether
logits are taken (the last prefill chunk and every decode token). Prefill, decode and mixed
(chunked-prefill) steps are all this one formula:

- FLOPs = 2 · P_matmul · Σnew  +  2 · V·D · Σsampled  +  4 · Hq · d · Σ_layers Σ_seq keys attended
  (QKᵀ and AV each cost 2·d per query-key pair per head; causal prefill of T gives the T² term).
- Bytes = weights read once per step (matmuls, norms, lm_head when any row is sampled, embedding rows
  of the new tokens) + per sequence and layer: its retained KV read once, its new K/V written once.
- Time ≥ max(FLOPs / peak, bytes / bandwidth); the larger side binds.

Not counted: activation traffic between kernels, tensor-parallel all-reduces, launch overhead, the
causal-mask savings some kernels make. It is a lower bound for one GPU rank, not a prediction.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple, TypedDict

from metrics.model.capacity import (
    kv_bytes_per_token_per_layer,
    kv_heads_per_rank,
    kv_tokens_kept,
    param_breakdown,
)
from metrics.model.config import ModelConfig
from metrics.model.presets import GpuSpec, dtype_bytes, resolve_gpu, resolve_model

Bound = Literal["compute", "memory"]


class SeqWork(NamedTuple):  # a tuple: the sim runner builds one per sequence per step
    context: int  # tokens already in this sequence's KV cache
    new: int  # tokens computed this step
    sampled: bool = True  # logits computed for its last position


@dataclass(frozen=True, slots=True)
class StepCost:
    flops: float
    bytes: float

    @property
    def intensity(self) -> float:
        return arithmetic_intensity(self.flops, self.bytes)


@dataclass(frozen=True, slots=True)
class TimeBound:
    seconds: float  # max(compute_s, memory_s), already divided by efficiency
    compute_s: float
    memory_s: float
    bound: Bound


def arithmetic_intensity(flops: float, bytes_moved: float) -> float:
    """I = FLOPs / bytes moved."""
    return flops / bytes_moved


def attainable_flops(peak_flops: float, bandwidth: float, intensity: float) -> float:
    """The roofline: min(peak, bandwidth × I)."""
    return min(peak_flops, bandwidth * intensity)


def compute_time_s(flops: float, peak_flops: float) -> float:
    """16 GFLOP at 200 TFLOP/s → 0.08 ms."""
    return flops / peak_flops


def memory_time_s(bytes_moved: float, bandwidth: float) -> float:
    """16 GB at 2 TB/s → 8 ms."""
    return bytes_moved / bandwidth


def time_bound(cost: StepCost, gpu: GpuSpec, *, efficiency: float = 1.0) -> TimeBound:
    """max(FLOPs / peak, bytes / bandwidth), both sides divided by the achieved fraction of peak."""
    if not 0.0 < efficiency <= 1.0:
        raise ValueError(f"efficiency must be in (0, 1], got {efficiency}")
    compute = compute_time_s(cost.flops, gpu.peak_flops) / efficiency
    memory = memory_time_s(cost.bytes, gpu.bandwidth) / efficiency
    return TimeBound(max(compute, memory), compute, memory, "compute" if compute >= memory else "memory")


def attended_keys(context: int, new: int, window: int | None) -> int:
    """Σ over the new queries (positions context+1 … context+new) of the keys each sees: min(t, W)."""
    first, last = context + 1, context + new
    if new <= 0:
        return 0
    cap = last if window is None else min(last, window)
    below = (first + cap) * (cap - first + 1) // 2 if cap >= first else 0
    above = 0 if window is None else max(0, last - max(first - 1, window)) * window
    return below + above


@functools.lru_cache(maxsize=64)
def _shape(model: ModelConfig, tp: int) -> tuple[int, int, int, int, int, tuple[tuple[int | None, int], ...]]:
    params = param_breakdown(model, tp=tp)
    head = -(-model.vocab_size // tp) * model.hidden_size  # lm_head matmul, tied or not
    groups = tuple(Counter(model.layer_windows).items())
    return (params.matmul, params.norms, head, model.num_heads // tp,
            kv_heads_per_rank(model.num_kv_heads, tp), groups)


def step_cost(model: ModelConfig, work: Sequence[SeqWork], *, weight_dtype_bytes: int = 2,
              kv_dtype_bytes: int = 2, tp: int = 1) -> StepCost:
    """FLOPs and bytes of one forward step over `work`, on one tensor-parallel rank."""
    matmul, norms, head, q_heads, kv_heads, groups = _shape(model, tp)
    new_tokens = sum(w.new for w in work)
    sampled = sum(1 for w in work if w.sampled)
    keys = 0
    kv_tokens = 0
    for window, layers in groups:
        keys += layers * sum(attended_keys(w.context, w.new, window) for w in work)
        kv_tokens += layers * sum(kv_tokens_kept(w.context, window) + w.new for w in work)
    flops = 2.0 * matmul * new_tokens + 2.0 * head * sampled + 4.0 * q_heads * model.head_dim * keys
    weights_read = matmul + norms + (head if sampled else 0) + new_tokens * model.hidden_size
    kv_bytes = kv_tokens * kv_bytes_per_token_per_layer(kv_heads, model.head_dim, kv_dtype_bytes)
    return StepCost(flops=flops, bytes=float(weights_read * weight_dtype_bytes + kv_bytes))


def prefill_cost(model: ModelConfig, prompt_tokens: int, *, cached_tokens: int = 0, weight_dtype_bytes: int = 2,
                 kv_dtype_bytes: int = 2, tp: int = 1) -> StepCost:
    """A whole prompt in one step; `cached_tokens` already in KV (a prefix-cache hit) are not recomputed."""
    if not 0 <= cached_tokens <= prompt_tokens:
        raise ValueError(f"cached_tokens must be in [0, prompt_tokens], got {cached_tokens}")
    return step_cost(model, [SeqWork(cached_tokens, prompt_tokens - cached_tokens)],
                     weight_dtype_bytes=weight_dtype_bytes, kv_dtype_bytes=kv_dtype_bytes, tp=tp)


def decode_step_cost(model: ModelConfig, context_lens: Sequence[int], *, weight_dtype_bytes: int = 2,
                     kv_dtype_bytes: int = 2, tp: int = 1) -> StepCost:
    """One decode token for each sequence; `context_lens` are the tokens already in each KV cache."""
    return step_cost(model, [SeqWork(c, 1) for c in context_lens], weight_dtype_bytes=weight_dtype_bytes,
                     kv_dtype_bytes=kv_dtype_bytes, tp=tp)


class FloorsJSON(TypedDict):
    """floors(): the latency floors of requests of one shape, and the deployment they are for."""

    model: str
    gpu: str
    tp: int
    batch: int
    efficiency: float
    prompt_tokens: int
    output_tokens: int
    cached_tokens: int
    ttft_floor_s: float
    prefill_bound: Bound
    prefill_compute_s: float
    prefill_memory_s: float
    tpot_floor_s: float | None  # None: a single output token, no decode step
    decode_bound: Bound | None
    decode_first_step_s: float | None
    decode_last_step_s: float | None
    e2e_floor_s: float
    decode_tokens_per_s: float | None


class ThroughputBoundJSON(TypedDict):
    """request_throughput_bound(): the ceiling on completed requests per second and what sets it."""

    requests_per_s: float
    compute_requests_per_s: float
    memory_requests_per_s: float | None  # None: no decode memory traffic (unbounded)
    bound: Bound
    flops_per_request: float
    decode_bytes_per_request: float
    max_batch: int
    efficiency: float


_TPOT_SAMPLES = 129  # decode steps evaluated for the TPOT average; costs are near-linear in context


def floors(model: ModelConfig | str, gpu: GpuSpec | str, prompt_tokens: int, output_tokens: int, batch: int = 1, *,
           weight_dtype: str = "bf16", kv_dtype: str | None = None, tp: int = 1, efficiency: float = 1.0,
           cached_tokens: int = 0) -> FloorsJSON:
    """Latency floors the roofline implies for requests of this shape.

    TTFT floor: one prompt prefilled alone in one step (no request can do better). TPOT floor: the mean
    decode-step bound over the request's N − 1 decode steps with `batch` sequences in lock-step, each
    at the same context (TPOT is that mean). E2E floor = TTFT + (N − 1) · TPOT.
    `model` and `gpu` may be preset names (or a config.json path for the model).
    """
    model = resolve_model(model) if isinstance(model, str) else model
    gpu = resolve_gpu(gpu) if isinstance(gpu, str) else gpu
    if prompt_tokens < 1 or output_tokens < 1 or batch < 1:
        raise ValueError("prompt_tokens, output_tokens and batch must be >= 1")
    wb, kb = dtype_bytes(weight_dtype), dtype_bytes(kv_dtype or weight_dtype)
    prefill = time_bound(prefill_cost(model, prompt_tokens, cached_tokens=cached_tokens, weight_dtype_bytes=wb,
                                      kv_dtype_bytes=kb, tp=tp), gpu, efficiency=efficiency)
    steps = output_tokens - 1
    picks = sorted({round(i * (steps - 1) / (_TPOT_SAMPLES - 1)) for i in range(_TPOT_SAMPLES)}) if steps else []
    bounds = [time_bound(decode_step_cost(model, [prompt_tokens + k] * batch, weight_dtype_bytes=wb,
                                          kv_dtype_bytes=kb, tp=tp), gpu, efficiency=efficiency) for k in picks]
    tpot = sum(b.seconds for b in bounds) / len(bounds) if bounds else None
    return {
        "model": model.name, "gpu": gpu.name, "tp": tp, "batch": batch, "efficiency": efficiency,
        "prompt_tokens": prompt_tokens, "output_tokens": output_tokens, "cached_tokens": cached_tokens,
        "ttft_floor_s": prefill.seconds, "prefill_bound": prefill.bound,
        "prefill_compute_s": prefill.compute_s, "prefill_memory_s": prefill.memory_s,
        "tpot_floor_s": tpot,
        "decode_bound": bounds[-1].bound if bounds else None,
        "decode_first_step_s": bounds[0].seconds if bounds else None,
        "decode_last_step_s": bounds[-1].seconds if bounds else None,
        "e2e_floor_s": prefill.seconds + steps * tpot if tpot is not None else prefill.seconds,
        "decode_tokens_per_s": batch / tpot if tpot else None,
    }


def request_throughput_bound(model: ModelConfig | str, gpu: GpuSpec | str, prompt_tokens: int, output_tokens: int,
                             *, max_batch: int, weight_dtype: str = "bf16", kv_dtype: str | None = None, tp: int = 1,
                             efficiency: float = 1.0, cached_tokens: int = 0) -> ThroughputBoundJSON:
    """An upper bound on completed requests per second, for requests of this shape on one replica.

    Serving N requests takes at least the time of all their steps, and a step takes at least both its
    FLOPs / peak and its bytes / bandwidth, so the total is at least the larger of the two sums:

    - compute: every request's FLOPs (its prefill, less `cached_tokens`, and its N − 1 decode tokens at
      their real contexts) ⇒ rate ≤ peak / FLOPs per request;
    - memory: every decode step reads the weights once and carries at most `max_batch` sequences, and
      each decode token reads its sequence's KV ⇒ rate ≤ bandwidth / ((N − 1) / max_batch · weight bytes
      + KV bytes per request).

    Prefill's weight reads, activations, communication and every overhead are left out, and `max_batch`
    should be the most sequences that could ever decode together, so the bound is never below what a
    server can do: a measured capacity above it means a mistake somewhere. It is a ceiling, not a
    prediction (queueing, scheduling and latency SLOs keep real capacity below it).
    """
    model = resolve_model(model) if isinstance(model, str) else model
    gpu = resolve_gpu(gpu) if isinstance(gpu, str) else gpu
    if prompt_tokens < 1 or output_tokens < 1 or max_batch < 1:
        raise ValueError("prompt_tokens, output_tokens and max_batch must be >= 1")
    if not 0 <= cached_tokens < prompt_tokens:
        raise ValueError("cached_tokens must be in [0, prompt_tokens)")
    if not 0.0 < efficiency <= 1.0:
        raise ValueError(f"efficiency must be in (0, 1], got {efficiency}")
    wb, kb = dtype_bytes(weight_dtype), dtype_bytes(kv_dtype or weight_dtype)
    prefill = prefill_cost(model, prompt_tokens, cached_tokens=cached_tokens, weight_dtype_bytes=wb,
                           kv_dtype_bytes=kb, tp=tp)
    steps = output_tokens - 1
    matmul, norms, head, *_ = _shape(model, tp)
    step_weights = float((matmul + norms + head) * wb)
    decode = step_cost(model, [SeqWork(prompt_tokens + k, 1) for k in range(steps)], weight_dtype_bytes=wb,
                       kv_dtype_bytes=kb, tp=tp) if steps else StepCost(0.0, step_weights)
    flops = prefill.flops + decode.flops
    kv_bytes = decode.bytes - step_weights  # one cost over every decode token holds the weights once
    memory_bytes = steps / max_batch * step_weights + kv_bytes
    compute_rate = gpu.peak_flops * efficiency / flops
    memory_rate = gpu.bandwidth * efficiency / memory_bytes if memory_bytes > 0 else math.inf
    return {
        "requests_per_s": min(compute_rate, memory_rate),
        "compute_requests_per_s": compute_rate,
        "memory_requests_per_s": memory_rate if math.isfinite(memory_rate) else None,
        "bound": "compute" if compute_rate <= memory_rate else "memory",
        "flops_per_request": flops,
        "decode_bytes_per_request": memory_bytes,
        "max_batch": max_batch,
        "efficiency": efficiency,
    }
