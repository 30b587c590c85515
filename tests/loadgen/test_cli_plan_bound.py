"""`goodput plan` prints the roofline upper bound on requests/s for the workload's shape."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from loadgen.cli.plan import build_plan, plan
from metrics.model.capacity import max_sequences_in_pool, paged_kv_bytes_for_sequence
from metrics.model.presets import MODEL_PRESETS
from metrics.model.roofline import request_throughput_bound


def _invoke(*args: str) -> tuple[int, str]:
    app = typer.Typer(add_completion=False, rich_markup_mode=None)
    app.command("plan")(plan)
    app.command("noop")(lambda: None)
    result = CliRunner().invoke(app, ["plan", *args])
    return result.exit_code, result.stdout


def test_table_and_json_show_the_bound() -> None:
    code, out = _invoke("--model", "Llama-3.1-8B", "--gpu", "L4", "--prompt-tokens", "256", "--output-tokens", "16")
    assert code == 0
    assert "throughput   <= 31.7 requests/s of this shape (compute-bound" in out
    code, out = _invoke("--model", "Llama-3.1-8B", "--gpu", "L4", "--prompt-tokens", "256", "--output-tokens", "16",
                        "--json")
    bound = json.loads(out)["throughput_bound"]
    assert bound["requests_per_s"] == pytest.approx(_hand_compute_bound(), rel=1e-9)
    assert bound["requests_per_s"] == pytest.approx(31.68, abs=0.01)


def _hand_compute_bound() -> float:
    """Llama-3.1-8B on an L4, 256 prompt + 16 output tokens, by the roofline step formula (docs/capacity.md,
    "The roofline step cost"): FLOPs = 2·P_matmul·Σnew + 2·V·D·Σsampled + 4·Hq·d·L·Σkeys, and the rate is
    at most peak / FLOPs per request (the memory side is far looser at this shape).

    Llama-3.1-8B (its config.json): L = 32, D = 4096, Hq = 32, Hkv = 8, d = 128, FFN 14336, V = 128256.
    Per layer, q and o are D × D, k and v D × 1024, the MLP three D × FFN: P_matmul = 32 × 218,103,808
    = 6,979,321,856. Prefill: 256 new tokens, one sampled, keys 1 + 2 + … + 256 = 32,896. Decode: 15 steps
    (the 16th token comes out of the 15th), each one new token and one sampled, at keys 257 … 271 = 3,960.
    FLOPs = 2·P·271 + 2·128256·4096·16 + 4·32·128·32·36,856 = 3.8189e12; the L4's dense BF16 peak is
    121 TFLOP/s, so at most 121e12 / 3.8189e12 = 31.68 requests/s."""
    layers, hidden, heads, kv_heads, head_dim, ffn, vocab = 32, 4096, 32, 8, 128, 14336, 128256
    per_layer = 2 * hidden * heads * head_dim + 2 * hidden * kv_heads * head_dim + 3 * hidden * ffn
    p_matmul = layers * per_layer
    assert p_matmul == 6_979_321_856
    prompt, output = 256, 16
    keys = prompt * (prompt + 1) // 2 + sum(prompt + 1 + k for k in range(output - 1))
    assert keys == 32_896 + 3_960
    flops = (2 * p_matmul * (prompt + output - 1) + 2 * vocab * hidden * output
             + 4 * heads * head_dim * layers * keys)
    return 121e12 / flops


def test_the_decode_batch_is_every_sequence_that_could_fit() -> None:
    plan_ = build_plan(model="Llama-3.1-8B", gpu="H100-SXM", tp=1, dtype="bf16", kv_dtype=None, block_size=16,
                       prompt_tokens=1024, output_tokens=256, concurrency=1)
    cfg = MODEL_PRESETS["Llama-3.1-8B"]
    memory = plan_["memory"]
    batch = max_sequences_in_pool(memory["budget"] - memory["weights"],
                                  paged_kv_bytes_for_sequence(cfg, 1025, block_size=16, kv_dtype_bytes=2))
    assert plan_["throughput_bound"]["max_batch"] == batch
    expected = request_throughput_bound(cfg, "H100-SXM", 1024, 256, max_batch=batch)
    assert plan_["throughput_bound"]["requests_per_s"] == pytest.approx(expected["requests_per_s"])
    # at least as many as the planner's own count of full-length sequences: the bound stays a bound
    assert batch >= plan_["max_concurrency"]
