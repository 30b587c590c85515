"""Engine settings, and the choice of how much KV pool a device gets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from metrics.model import ModelConfig, blocks_for_tokens, kv_bytes_per_block
from refserver.model import max_positions

DEFAULT_CPU_KV_BYTES = 1 << 30
GPU_FREE_MEMORY_FRACTION = 0.8  # of the memory still free after the weights are loaded


@dataclass(slots=True)
class EngineConfig:
    model_dir: str | None = None  # a local Hugging Face Llama directory; None = the tiny random model
    dtype: str = "auto"  # auto (float32 on CPU, bfloat16 on GPU), float32, bfloat16, float16
    device: str = "auto"  # auto (cuda if available), cpu, cuda, cuda:1, ...
    block_size: int = 16
    num_blocks: int | None = None  # KV pool size; None = from kv_cache_bytes
    kv_cache_bytes: int | None = None  # KV budget when num_blocks is None; None = a per-device default
    max_num_batched_tokens: int = 512  # per-step token budget (decode tokens + prefill chunks)
    max_num_seqs: int = 64
    max_waiting: int = 256
    seed: int = 0  # tiny model weights and the shared sampling generator
    cpu_threads: int | None = None  # torch intra-op threads on CPU; None = 1 for the tiny model, else torch's default
    enable_prefix_caching: bool = True
    runner: Literal["torch", "sim"] = "torch"
    sim: Any = None  # the sim runner's options (refserver.engine.sim_runner.SimOptions)

    def __post_init__(self) -> None:
        if self.runner not in ("torch", "sim"):
            raise ValueError(f"runner must be 'torch' or 'sim', got {self.runner!r}")
        for name in ("block_size", "max_num_batched_tokens", "max_num_seqs", "max_waiting"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.num_blocks is not None and self.num_blocks < 1:
            raise ValueError(f"num_blocks must be >= 1, got {self.num_blocks}")


def choose_num_blocks(
    config: EngineConfig, model: ModelConfig, dtype_bytes: int, free_device_bytes: int | None
) -> int:
    """Pool size: explicit num_blocks, else the byte budget over the block size, capped at what
    max_num_seqs full-context sequences could ever use (so the tiny model does not grab a gigabyte)."""
    if config.num_blocks is not None:
        return config.num_blocks
    budget = config.kv_cache_bytes
    if budget is None:
        budget = DEFAULT_CPU_KV_BYTES if free_device_bytes is None else int(free_device_bytes * GPU_FREE_MEMORY_FRACTION)
    per_block = kv_bytes_per_block(model, block_size=config.block_size, kv_dtype_bytes=dtype_bytes)
    useful = config.max_num_seqs * blocks_for_tokens(max_positions(model), config.block_size)
    num_blocks = min(budget // per_block, useful)
    if num_blocks < 1:
        raise ValueError(f"KV budget of {budget} bytes is smaller than one block ({per_block} bytes)")
    return num_blocks
