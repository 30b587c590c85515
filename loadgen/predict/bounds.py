"""Physical lower bounds of the step-time parameters from the roofline of the served model on its GPU
(metrics.model): no engine computes a token faster than its FLOPs at peak, nor reads a KV token faster
than its bytes at full bandwidth. `goodput calibrate --model --gpu` keeps the fit above them and, where
the runs cannot identify a parameter, holds it at its bound instead of refusing."""

from __future__ import annotations

from metrics.model import dtype_bytes, kv_bytes_per_token, param_breakdown, resolve_gpu, resolve_model


def matmul_params(total: int, embedding: int) -> int:
    """Parameters multiplied per token: all but the embedding table (a lookup, not a matmul)."""
    return total - embedding


def token_compute_s(params: int, peak_flops: float) -> float:
    """2 FLOPs per parameter per token, at peak."""
    return 2.0 * params / peak_flops


def kv_read_s(bytes_per_token: int, bandwidth: float) -> float:
    """One KV token's bytes at full bandwidth."""
    return bytes_per_token / bandwidth


def roofline_bounds(model: str, gpu: str, *, tp: int = 1, dtype: str = "bf16") -> dict[str, float]:
    """Lower bounds per parameter name (loadgen.predict.step_model.PARAMS); ValueError for an unknown
    model or GPU."""
    cfg, spec = resolve_model(model), resolve_gpu(gpu)
    p = param_breakdown(cfg, tp=tp)
    per_token = token_compute_s(matmul_params(p.total, p.embedding), spec.peak_flops)
    kv = kv_read_s(kv_bytes_per_token(cfg, kv_dtype_bytes=dtype_bytes(dtype), tp=tp), spec.bandwidth)
    return {"prefill_s": per_token, "decode_seq_s": per_token, "decode_kv_s": kv}
