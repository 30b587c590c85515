"""`goodput plan` through Typer's CliRunner, on a small app built around the command function."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from loadgen.cli.plan import build_plan, plan
from metrics.model.capacity import GIB, kv_bytes_per_token, plan_memory
from metrics.model.presets import GPU_PRESETS, MODEL_PRESETS
from metrics.model.roofline import floors

runner = CliRunner()


def _app() -> typer.Typer:
    app = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False)
    app.command("plan")(plan)
    app.command("noop")(lambda: None)  # two commands, so "plan" stays a subcommand as in `goodput plan`
    return app


def _run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(_app(), ["plan", *args])
    return result.exit_code, result.stdout, result.stderr


def test_table_shows_every_section() -> None:
    code, out, _ = _run("--model", "Llama-3.1-8B", "--gpu", "H100-SXM", "--prompt-tokens", "2048",
                        "--output-tokens", "256", "--concurrency", "64")
    assert code == 0
    for label in ("KV / token   128.00 KiB", "blocks", "weights", "headroom", "max concurrency", "prefill",
                  "decode step", "compute-bound", "memory-bound", "TTFT >=", "TPOT >="):
        assert label in out, label


def test_json_matches_the_library_functions() -> None:
    code, out, _ = _run("--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--prompt-tokens", "1000",
                        "--output-tokens", "24", "--concurrency", "10", "--block-size", "16", "--json")
    assert code == 0
    result = json.loads(out)
    model, gpu = MODEL_PRESETS["Llama-3.1-8B"], GPU_PRESETS["H100-SXM"]
    assert result["kv"]["bytes_per_token"] == kv_bytes_per_token(model, kv_dtype_bytes=2) == 131072
    assert result["blocks"]["per_sequence"] == 64  # ceil(1024 / 16)
    assert result["blocks"]["unused_slots"] == 0
    memory = plan_memory(model, memory_bytes=gpu.memory_bytes, seq_tokens=1024, concurrency=10)
    assert result["max_concurrency"] == memory.max_sequences
    assert result["memory"]["headroom"] == memory.headroom
    expected = floors(model, gpu, 1000, 24, 10)
    assert result["floors"]["ttft_floor_s"] == pytest.approx(expected["ttft_floor_s"])
    assert result["floors"]["tpot_floor_s"] == pytest.approx(expected["tpot_floor_s"])
    assert result["prefill"]["bound"] == "compute" and result["decode_step"]["bound"] == "memory"


def test_fragmentation_follows_the_seed_example() -> None:
    result = build_plan(model="Llama-3.1-8B", gpu="H100-SXM", tp=1, dtype="bf16", kv_dtype=None, block_size=16,
                        prompt_tokens=16, output_tokens=1, concurrency=2)
    # Two requests of 17 tokens: 2 blocks each, 64 slots, 30 unused.
    assert result["blocks"]["total"] == 4
    assert result["blocks"]["reserved_slots"] == 64
    assert result["blocks"]["unused_slots"] == 30


def test_tp_and_fp8_kv_shrink_per_rank_memory(tmp_path: Path) -> None:
    base = build_plan(model="Llama-3.1-70B", gpu="H200", tp=1, dtype="bf16", kv_dtype=None, block_size=16,
                      prompt_tokens=1024, output_tokens=128, concurrency=8)
    split = build_plan(model="Llama-3.1-70B", gpu="H200", tp=4, dtype="bf16", kv_dtype="fp8", block_size=16,
                       prompt_tokens=1024, output_tokens=128, concurrency=8)
    assert split["memory"]["weights"] < base["memory"]["weights"] / 3.9
    assert split["kv"]["bytes_per_token"] == base["kv"]["bytes_per_token"] // 8
    assert base["memory"]["weights"] > 130 * GIB and split["memory"]["fits"]


def test_config_json_path_is_accepted(tmp_path: Path) -> None:
    config = {"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2,
              "num_hidden_layers": 2, "intermediate_size": 512, "vocab_size": 1000}
    (tmp_path / "config.json").write_text(json.dumps(config))
    code, out, _ = _run("--model", str(tmp_path), "--gpu", "L4", "--json")
    assert code == 0
    assert json.loads(out)["kv"]["bytes_per_token"] == 2 * 2 * 2 * 64 * 2


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--model", "no-such-model"], "unknown model"),
        (["--gpu", "V100"], "unknown GPU"),
        (["--dtype", "int3"], "unknown dtype"),
        (["--model", "Llama-3.1-70B", "--tp", "3"], "TP=3"),
        (["--concurrency", "0"], "concurrency"),
        (["--gpu-memory-utilization", "1.5"], "utilization"),
        (["--efficiency", "0"], "efficiency"),
        (["--tp", "0"], "--tp"),
        (["--cached-tokens", "2000", "--prompt-tokens", "1000"], "cached-tokens"),
        (["--prompt-tokens", "200000"], "exceeds"),
    ],
)
def test_bad_values_exit_2_with_a_message(args: list[str], words: str) -> None:
    code, out, err = _run(*args)
    assert code == 2
    assert words.lower() in err.lower()
    assert out == ""


def test_unmodelled_architecture_is_a_usage_error(tmp_path: Path) -> None:
    config = {"model_type": "deepseek_v3", "kv_lora_rank": 512, "hidden_size": 256, "num_attention_heads": 4,
              "num_hidden_layers": 2, "intermediate_size": 512, "vocab_size": 1000}
    (tmp_path / "config.json").write_text(json.dumps(config))
    code, _, err = _run("--model", str(tmp_path / "config.json"))
    assert code == 2
    assert "MLA" in err


def test_help_has_examples() -> None:
    result = runner.invoke(_app(), ["plan", "--help"])
    assert result.exit_code == 0
    assert "Examples:" in result.stdout and "goodput plan --model" in result.stdout
