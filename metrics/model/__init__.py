"""Model and hardware arithmetic: a model's shape (`config`), presets of models and GPUs (`presets`), KV
cache and memory capacity (`capacity`), the roofline floors of a step (`roofline`) and what serving costs
(`cost`).

The names below are imported on first use (metrics.lazy_face).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics import lazy_names

if TYPE_CHECKING:
    from metrics.model.capacity import (
        DEFAULT_BATCHED_TOKENS,
        DEFAULT_MAX_NUM_SEQS,
        GIB,
        blocks_for_tokens,
        blocks_for_window,
        kv_bytes_for_sequence,
        kv_bytes_per_block,
        kv_bytes_per_token,
        max_sequences_in_pool,
        paged_kv_bytes_for_sequence,
        paged_usage,
        param_breakdown,
        plan_memory,
    )
    from metrics.model.config import (
        ModelConfig,
        RopeScaling,
        UnsupportedModelError,
        model_from_hf_config,
        special_token_ids,
    )
    from metrics.model.cost import (
        CostOptions,
        cost_block,
        cost_lines,
        energy_joules,
        joules_per_output_token,
        read_cost,
    )
    from metrics.model.presets import (
        GPU_PRESETS,
        MODEL_PRESETS,
        GpuSpec,
        dtype_bytes,
        resolve_gpu,
        resolve_model,
    )
    from metrics.model.roofline import (
        FloorsJSON,
        SeqWork,
        ThroughputBoundJSON,
        decode_step_cost,
        floors,
        prefill_cost,
        request_throughput_bound,
        step_cost,
        time_bound,
    )

__all__ = [
    "DEFAULT_BATCHED_TOKENS",
    "DEFAULT_MAX_NUM_SEQS",
    "GIB",
    "GPU_PRESETS",
    "MODEL_PRESETS",
    "CostOptions",
    "FloorsJSON",
    "GpuSpec",
    "ModelConfig",
    "RopeScaling",
    "SeqWork",
    "ThroughputBoundJSON",
    "UnsupportedModelError",
    "blocks_for_tokens",
    "blocks_for_window",
    "cost_block",
    "cost_lines",
    "decode_step_cost",
    "dtype_bytes",
    "energy_joules",
    "floors",
    "joules_per_output_token",
    "kv_bytes_for_sequence",
    "kv_bytes_per_block",
    "kv_bytes_per_token",
    "max_sequences_in_pool",
    "model_from_hf_config",
    "paged_kv_bytes_for_sequence",
    "paged_usage",
    "param_breakdown",
    "plan_memory",
    "prefill_cost",
    "read_cost",
    "request_throughput_bound",
    "resolve_gpu",
    "resolve_model",
    "special_token_ids",
    "step_cost",
    "time_bound",
]

__getattr__ = lazy_names(__name__, {
    "DEFAULT_BATCHED_TOKENS": "capacity", "DEFAULT_MAX_NUM_SEQS": "capacity", "GIB": "capacity",
    "blocks_for_tokens": "capacity", "blocks_for_window": "capacity", "kv_bytes_for_sequence": "capacity",
    "kv_bytes_per_block": "capacity", "kv_bytes_per_token": "capacity", "max_sequences_in_pool": "capacity",
    "paged_kv_bytes_for_sequence": "capacity", "paged_usage": "capacity", "param_breakdown": "capacity",
    "plan_memory": "capacity",
    "ModelConfig": "config", "RopeScaling": "config", "UnsupportedModelError": "config",
    "model_from_hf_config": "config", "special_token_ids": "config",
    "CostOptions": "cost", "cost_block": "cost", "cost_lines": "cost", "energy_joules": "cost",
    "joules_per_output_token": "cost", "read_cost": "cost",
    "GPU_PRESETS": "presets", "GpuSpec": "presets", "MODEL_PRESETS": "presets", "dtype_bytes": "presets",
    "resolve_gpu": "presets", "resolve_model": "presets",
    "FloorsJSON": "roofline", "SeqWork": "roofline", "ThroughputBoundJSON": "roofline", "decode_step_cost": "roofline", "floors": "roofline", "prefill_cost": "roofline",
    "request_throughput_bound": "roofline", "step_cost": "roofline", "time_bound": "roofline",
})
