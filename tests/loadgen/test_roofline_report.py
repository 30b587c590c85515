"""Measured latency beside the roofline floors: from --model-config/--gpu, or announced by a sim target."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from loadgen.cli import run_cli
from loadgen.run.roofline import roofline_section, roofline_spec, spec_from_models_entry
from metrics.model.roofline import floors

GOODPUT = str(Path(sys.executable).with_name("goodput"))


def _summary(*, ttft_p50: float, tpot_p50: float, rate: float, e2e_mean: float) -> dict[str, object]:
    return {
        "tokens": {"requests": 4, "prompt_tokens": 4 * 1000, "output_tokens": 4 * 100, "cached_tokens": 0},
        "throughput": {"requests_per_s": rate},
        "latency": {"ttft_s": {"p50": ttft_p50}, "tpot_s": {"p50": tpot_p50}, "e2e_s": {"p50": 1.0, "mean": e2e_mean}},
    }


def test_section_uses_the_runs_shape_and_littles_law_batch() -> None:
    spec = {"model": "Llama-3.1-8B", "gpu": "H100-SXM", "tp": 1, "dtype": "bf16"}
    section = roofline_section(_summary(ttft_p50=0.2, tpot_p50=0.02, rate=8.0, e2e_mean=2.0), spec)
    expected = floors("Llama-3.1-8B", "H100-SXM", 1000, 100, batch=16)  # 8 req/s × 2 s in flight
    assert section["floors"] == expected and section["mean_in_flight"] == 16.0
    assert section["ttft_s"]["ratio"] == pytest.approx(0.2 / expected["ttft_floor_s"])
    assert section["tpot_s"]["ratio"] == pytest.approx(0.02 / expected["tpot_floor_s"])


def test_section_reports_what_it_cannot_compute() -> None:
    spec = {"model": "no-such-model", "gpu": "H100-SXM"}
    assert "error" in roofline_section(_summary(ttft_p50=0.2, tpot_p50=0.02, rate=1.0, e2e_mean=1.0), spec)
    empty = {"tokens": {"requests": 0}, "latency": {}, "throughput": {}}
    assert roofline_section(empty, {"model": "Llama-3.1-8B", "gpu": "H200"})["error"].startswith("no measured")


def test_only_sim_entries_carry_a_spec() -> None:
    assert spec_from_models_entry({"id": "m", "object": "model"}) is None
    entry = {"id": "m", "engine": "sim", "sim": {"sim_model": "Qwen2.5-7B", "sim_gpu": "L40S", "tp": 2,
                                                 "dtype": "bf16", "kv_dtype": "fp8", "efficiency": 0.5}}
    spec = spec_from_models_entry(entry)
    assert spec is not None and (spec["model"], spec["gpu"], spec["tp"], spec["kv_dtype"]) == ("Qwen2.5-7B", "L40S", 2, "fp8")


def test_the_spec_read_back_from_run_json_is_checked() -> None:
    # Keys of the wrong type are dropped where run.json is read, the others kept in the order the run wrote.
    raw = {"model": "Llama-3.1-8B", "gpu": "H200", "tp": "2", "dtype": "bf16", "source": 5, "other": 1}
    spec = roofline_spec(raw)
    assert spec == {"model": "Llama-3.1-8B", "gpu": "H200", "dtype": "bf16"} and list(spec) == ["model", "gpu", "dtype"]
    assert roofline_spec(["Llama-3.1-8B"]) is None


@pytest.mark.parametrize(("args", "needle"), [
    (["--model-config", "Llama-3.1-8B"], "--model-config and --gpu go together"),
    (["--model-config", "Llama-3.1-8B", "--gpu", "Z100"], "unknown GPU"),
    (["--model-config", "nope-13B", "--gpu", "H200"], "nope-13B"),
])
def test_bad_roofline_options_are_usage_errors(args: list[str], needle: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["run", "--url", "http://127.0.0.1:9", "--model", "m", "--output", str(tmp_path / "o"), *args]) == 2
    assert needle in capsys.readouterr().err


def test_sim_target_announces_its_deployment_and_the_floors_hold(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = subprocess.run([GOODPUT, "run", "--requests", "12", "--rate", "20", "--prompt-tokens", "300",
                           "--output-tokens", "16", "--quiet", "--server-metrics", "none", "--output", str(out),
                           "--server-arg=--engine=sim", "--server-arg=--sim-gpu=H200", "--server-arg=--sim-tp=2"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    roof = json.loads((out / "summary.json").read_text())["roofline"]
    assert roof["spec"]["source"] == "sim engine"
    assert (roof["floors"]["gpu"], roof["floors"]["tp"]) == ("H200", 2)
    # The sim runs at 0.75 of peak plus a step overhead: nothing it measures can beat the floor.
    assert roof["ttft_s"]["ratio"] > 1 and roof["tpot_s"]["ratio"] > 1
    assert "roofline (Llama-3.1-8B on H200, TP=2" in proc.stdout
