"""The predictor's ground truth on the torch reference server on the CPU (a real engine, real step times):
the protocol of bench/predict_ground_truth.py (calibrate from a sweep of one workload, then predict and
measure the capacity of another prompt/output mix and of a trace with prefix reuse) against `goodput serve`
without --sim: the tiny random model, one torch thread, float32.

    nice -n 10 .venv/bin/python bench/predict_ground_truth_torch.py --out /tmp/pgt-torch

The machine's load average is printed before and after: the server's step times are the CPU's, so other
processes on it lengthen them (and not evenly over the run).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.predict_ground_truth import Setup, Target, capacity_table
from bench.predict_workloads import synthetic, trace_mix, write_prefix_trace

TORCH_LIMITS = ("--max-num-seqs", "32", "--max-num-batched-tokens", "512", "--num-blocks", "800")
# The calibration mix reaches the targets' regime: prompts up to 1,536 tokens (prefill chunks at long
# contexts, whose attention is most of a CPU step) and outputs long enough that several sequences decode
# together; its top rates pass the server's capacity on a loaded machine, so prefill chunks share steps with
# decodes (the steps the chunk times can time). The server's /metrics is scraped (its own prefill timer).
TORCH_CALIBRATION = synthetic("uniform:128:1536", "uniform:16:128")
TORCH = Setup(server=("--device", "cpu", "--dtype", "float32", "--cpu-threads", "1", *TORCH_LIMITS),
              limits=TORCH_LIMITS, calibration_rates="1,2,3,4,5", calibration_point="20s", capacity_point="30s",
              calibration=TORCH_CALIBRATION, scrape_calibration=True)
OTHER = synthetic("1024", "32")


def torch_targets(out: Path, max_rate: float) -> list[Target]:
    trace = write_prefix_trace(out / "prefix-trace.jsonl", 4000)
    return [Target(OTHER, 0.25, max_rate, "mix"), Target(trace_mix(trace), 0.25, max_rate, "trace")]


def load() -> str:
    return "load average " + ", ".join(f"{v:.1f}" for v in os.getloadavg())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--slo", action="append", default=None)
    parser.add_argument("--attainment", type=float, default=0.9)
    parser.add_argument("--max-rate", type=float, default=32.0)  # a quiet host passed 21.4 req/s (run 11)
    parser.add_argument("--calibration-rates", default=TORCH.calibration_rates,
                        help="the calibration sweep's rates: up to the server's capacity, so that its steps "
                             "reach the targets' regime (many sequences decoding beside a prefill chunk)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    print("before:", load(), flush=True)
    setup = replace(TORCH, calibration_rates=args.calibration_rates)
    print(capacity_table(args.out, setup, torch_targets(args.out, args.max_rate), args.slo or ["ttft=2s"],
                         args.attainment))
    print("after:", load())
    return 0


if __name__ == "__main__":
    sys.exit(main())
