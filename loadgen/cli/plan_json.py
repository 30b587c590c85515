"""`goodput plan --json`: the plan's document (loadgen.cli.plan builds it, base units: bytes, seconds, FLOPs)
as TypedDicts, key for key in the order it is written."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from metrics.model import ThroughputBoundJSON
from metrics.results import CostJson


class PlanModel(TypedDict):
    name: str
    layers: int
    hidden_size: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    sliding_windows: list[int]
    params_per_rank: int
    params_total: int


class PlanGpu(TypedDict):
    name: str
    peak_flops: float
    bandwidth_bytes_per_s: float
    memory_bytes: int
    source: str


class PlanSettings(TypedDict):
    tp: int
    dtype: str
    kv_dtype: str
    block_size: int
    prompt_tokens: int
    output_tokens: int
    concurrency: int
    cached_tokens: int
    gpu_memory_utilization: float
    efficiency: float
    max_num_batched_tokens: int


class PlanKv(TypedDict):
    bytes_per_token: int
    bytes_per_sequence_logical: int
    bytes_per_sequence_paged: int


class PlanBlocks(TypedDict):
    per_sequence: int
    total: int
    reserved_slots: int
    unused_slots: int
    fragmentation: float
    sliding_layer_blocks_per_sequence: int | None  # None: no sliding-window layer


class PlanMemory(TypedDict):
    budget: int
    weights: int
    activation: int
    overhead: int
    kv: int
    total: int
    headroom: int
    kv_pool: int
    fits: bool


class PlanStepCost(TypedDict):
    """What a prefill or a decode step costs on the GPU and which side bounds it."""

    flops: float
    bytes: float
    intensity: float
    compute_s: float
    memory_s: float
    bound: str  # compute | memory


class PlanPrefill(PlanStepCost):
    tokens: int


class PlanDecodeStep(PlanStepCost):
    batch: int
    context: int


class PlanFloors(TypedDict):
    ttft_floor_s: float
    tpot_floor_s: float | None  # None: a single output token
    e2e_floor_s: float
    decode_tokens_per_s: float | None


class PlanCost(CostJson):
    """The cost at the requests/s bound (metrics.model.cost_block) and the basis of its figures."""

    basis: str


class PlanJson(TypedDict):
    model: PlanModel
    gpu: PlanGpu
    settings: PlanSettings
    kv: PlanKv
    blocks: PlanBlocks
    memory: PlanMemory
    max_concurrency: int
    prefill: PlanPrefill
    decode_step: PlanDecodeStep
    floors: PlanFloors
    throughput_bound: ThroughputBoundJSON
    cost: NotRequired[PlanCost]  # with --gpu-hour-cost
