"""Shipped model and GPU presets, and name resolution for both.

Model numbers are the public `config.json` values of each model. GPU numbers are vendor datasheet
peaks: dense BF16 tensor FLOP/s (without 2:4 sparsity, which datasheets often quote doubled), HBM or
GDDR bandwidth in decimal bytes/s, and memory. Datasheet "GB" of HBM parts is binary in practice
(an H100 80GB shows 81559 MiB in nvidia-smi), so memory is stored as GiB; the runtime's own reservations
are what the memory-utilisation fraction leaves out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from metrics.model.config import ModelConfig, load_model_config

GIB = 1024**3

# Bytes per element. fp8/int8 ignore per-tensor or per-group scales, which add well under 1%.
DTYPE_BYTES: dict[str, int] = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1}


def dtype_bytes(dtype: str) -> int:
    """Bytes per element of a weight or KV dtype name (`bf16`, `fp16`, `fp32`, `fp8`, `int8`)."""
    try:
        return DTYPE_BYTES[dtype.lower()]
    except KeyError:
        raise ValueError(f"unknown dtype {dtype!r}; known: {', '.join(DTYPE_BYTES)}") from None


@dataclass(frozen=True, slots=True)
class GpuSpec:
    name: str
    peak_flops: float  # dense BF16/FP16 tensor FLOP/s
    bandwidth: float  # device memory bytes/s
    memory_bytes: int
    source: str

    def __post_init__(self) -> None:
        if self.peak_flops <= 0 or self.bandwidth <= 0 or self.memory_bytes <= 0:
            raise ValueError(f"{self.name}: peak_flops, bandwidth and memory must be positive")


GPU_PRESETS: dict[str, GpuSpec] = {
    g.name: g
    for g in (
        # NVIDIA H100 Tensor Core GPU datasheet: BF16 1,979 TFLOPS with sparsity, 3.35 TB/s, 80 GB (SXM).
        GpuSpec("H100-SXM", 989.4e12, 3.35e12, 80 * GIB, "NVIDIA H100 datasheet (SXM)"),
        # Same datasheet, PCIe column: BF16 1,513 TFLOPS with sparsity, 2 TB/s, 80 GB.
        GpuSpec("H100-PCIe", 756.5e12, 2.0e12, 80 * GIB, "NVIDIA H100 datasheet (PCIe)"),
        # NVIDIA H200 datasheet (SXM): BF16 1,979 TFLOPS with sparsity, 4.8 TB/s, 141 GB HBM3e.
        GpuSpec("H200", 989.4e12, 4.8e12, 141 * GIB, "NVIDIA H200 datasheet (SXM)"),
        # NVIDIA A100 datasheet: BF16 312 TFLOPS dense; 40 GB HBM2 at 1,555 GB/s (SXM).
        GpuSpec("A100-40GB", 312e12, 1.555e12, 40 * GIB, "NVIDIA A100 datasheet (40GB SXM)"),
        # Same datasheet: 80 GB HBM2e at 2,039 GB/s (SXM).
        GpuSpec("A100-80GB", 312e12, 2.039e12, 80 * GIB, "NVIDIA A100 datasheet (80GB SXM)"),
        # NVIDIA L40S datasheet: BF16 362.05 TFLOPS dense (733 with sparsity), 48 GB GDDR6, 864 GB/s.
        GpuSpec("L40S", 362.05e12, 864e9, 48 * GIB, "NVIDIA L40S datasheet"),
        # NVIDIA L4 datasheet: BF16 242 TFLOPS with sparsity, 24 GB GDDR6, 300 GB/s.
        GpuSpec("L4", 121e12, 300e9, 24 * GIB, "NVIDIA L4 datasheet"),
        # AMD Instinct MI300X datasheet: BF16 1,307.4 TFLOPS dense, 192 GB HBM3, 5.3 TB/s.
        GpuSpec("MI300X", 1307.4e12, 5.3e12, 192 * GIB, "AMD Instinct MI300X datasheet"),
        # NVIDIA HGX/DGX B200 datasheet, per GPU: BF16 4.5 PFLOPS with sparsity, 8 TB/s,
        # 180 GB (DGX B200: 1,440 GB over 8 GPUs; the bare chip is quoted at 192 GB).
        GpuSpec("B200", 2.25e15, 8.0e12, 180 * GIB, "NVIDIA DGX B200 / HGX B200 datasheet"),
    )
}


def _llama31(name: str, layers: int, hidden: int, heads: int, ffn: int) -> ModelConfig:
    return ModelConfig(name=name, num_layers=layers, hidden_size=hidden, num_heads=heads, num_kv_heads=8,
                       head_dim=128, intermediate_size=ffn, vocab_size=128256, tie_word_embeddings=False,
                       max_position_embeddings=131072)


MODEL_PRESETS: dict[str, ModelConfig] = {
    m.name: m
    for m in (
        # meta-llama/Llama-3.1-8B config.json
        _llama31("Llama-3.1-8B", 32, 4096, 32, 14336),
        # meta-llama/Llama-3.1-70B config.json
        _llama31("Llama-3.1-70B", 80, 8192, 64, 28672),
        # Qwen/Qwen2.5-7B config.json: q/k/v biases; sliding_window present but use_sliding_window false.
        ModelConfig(name="Qwen2.5-7B", num_layers=28, hidden_size=3584, num_heads=28, num_kv_heads=4,
                    head_dim=128, intermediate_size=18944, vocab_size=152064, tie_word_embeddings=False,
                    qkv_bias=True, max_position_embeddings=131072),
        # mistralai/Mistral-7B-v0.1 config.json: every layer attends a 4096-token sliding window.
        ModelConfig(name="Mistral-7B", num_layers=32, hidden_size=4096, num_heads=32, num_kv_heads=8,
                    head_dim=128, intermediate_size=14336, vocab_size=32000, tie_word_embeddings=False,
                    layer_windows=(4096,) * 32, max_position_embeddings=32768),
    )
}


def _lookup(name: str, names: Iterable[str]) -> str | None:
    wanted = name.lower().replace("_", "-")
    for key in names:
        if key.lower() == wanted:
            return key
    return None


def resolve_model(name_or_path: str) -> ModelConfig:
    """A preset name (case-insensitive) or a path to `config.json` / a model directory."""
    key = _lookup(name_or_path, MODEL_PRESETS)
    if key is not None:
        return MODEL_PRESETS[key]
    path = Path(name_or_path)
    if path.exists():
        return load_model_config(path)
    raise ValueError(f"unknown model {name_or_path!r}: not a preset ({', '.join(MODEL_PRESETS)}) "
                     "and no such config.json path")


def resolve_gpu(name: str) -> GpuSpec:
    key = _lookup(name, GPU_PRESETS)
    if key is None:
        raise ValueError(f"unknown GPU {name!r}; presets: {', '.join(GPU_PRESETS)}")
    return GPU_PRESETS[key]
