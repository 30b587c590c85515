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
    assert bound["requests_per_s"] == pytest.approx(31.68, abs=0.01)


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
