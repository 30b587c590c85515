"""Ground truth for `goodput calibrate` + `goodput predict`: on a sim-engine server whose settings the fit
is not told (GPU preset, efficiency, step overhead), calibrate from a sweep of one workload, then
predict another workload and measure it on the same server.

- `latency_check` (the CI version, tests/predict/test_ground_truth.py): workload B run once at one rate;
  the prediction replays the run's own send times, so only the model's error remains; median TTFT and
  TPOT are compared.
- `main` (the full protocol, bench/README.md): `goodput capacity` measures workload B's capacity and
  `goodput predict --capacity` predicts it; the table gives both and the error.

    .venv/bin/python bench/predict_ground_truth.py --out /tmp/pgt
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from loadgen.cli.run import run_defaults
from loadgen.predict.requests import build_requests
from loadgen.predict.step_model import load_model
from loadgen.predict.virtual import simulate
from loadgen.run.embedded import embedded_server
from loadgen.spec.build import build_spec
from metrics.records.record import read_records

GOODPUT = str(Path(sys.executable).with_name("goodput"))
# What the fit is told: the scheduler's limits. What it is not told: the GPU, the efficiency, the overhead.
LIMITS = ["--max-num-seqs", "64", "--max-num-batched-tokens", "512", "--num-blocks", "4000"]
SERVER = ["--engine", "sim", "--sim-model", "Llama-3.1-8B", "--sim-gpu", "L4", "--sim-efficiency", "0.6",
          "--sim-step-overhead-ms", "2", "--no-prefix-caching", *LIMITS]
COMMON = ["--tokenizer", "bytes", "--ignore-eos", "--server-metrics", "none", "--quiet", "--lag-threshold", "100ms"]


@dataclass(frozen=True, slots=True)
class Mix:
    prompt_tokens: str
    output_tokens: str
    prefix_groups: int = 0  # shared-prefix mode: groups with a common system prompt of prefix_tokens
    prefix_tokens: int = 0

    def args(self) -> list[str]:
        shared = ["--prefix-groups", str(self.prefix_groups), "--prefix-tokens", str(self.prefix_tokens)]
        return ["--prompt-tokens", self.prompt_tokens, "--output-tokens", self.output_tokens,
                *(shared if self.prefix_groups else [])]

    def values(self) -> dict[str, object]:
        return {"prompt_tokens": self.prompt_tokens, "output_tokens": self.output_tokens,
                "prefix_groups": self.prefix_groups, "prefix_tokens": self.prefix_tokens}


CALIBRATION = Mix("uniform:64:512", "uniform:16:64")
OTHER = Mix("1024", "32")
SHARED = Mix("1024", "32", prefix_groups=2, prefix_tokens=768)  # 3 of 4 blocks' worth from the prefix cache


def goodput(*args: str) -> None:
    subprocess.run([GOODPUT, *args], check=True, stdout=subprocess.DEVNULL)


def calibrate(url: str, out: Path, rates: str, point_duration: str) -> Path:
    goodput("sweep", "--url", url, "--rates", rates, "--point-duration", point_duration,
            "--output", str(out / "calibration"), *CALIBRATION.args(), *COMMON)
    model = out / "server-model.json"
    goodput("calibrate", str(out / "calibration"), *LIMITS, "--output", str(model))
    return model


def replay_medians(model_path: Path, run_dir: Path, mix: Mix) -> dict[str, tuple[float, float]]:
    """(measured, predicted) median TTFT and TPOT of one run, the prediction at the run's own send times."""
    records = sorted(read_records(str(run_dir / "records.jsonl")), key=lambda r: r.id)
    values = run_defaults()
    values.update(mix.values())
    values.update(tokenizer="bytes", requests=len(records), duration=None)
    reqs = build_requests(build_spec(values)[0])
    offsets = np.array([r.intended_ns for r in records], dtype=np.float64) / 1e9
    out = simulate(load_model(model_path), reqs.prompts, reqs.max_tokens, offsets - offsets[0])
    ttft = np.array([(r.chunk_ns[0] - r.intended_ns) / 1e9 for r in records if r.chunk_ns])
    tpot = np.array([(r.chunk_ns[-1] - r.chunk_ns[0]) / 1e9 / (len(r.chunk_ns) - 1)
                     for r in records if len(r.chunk_ns) > 1])
    return {"ttft": (float(np.median(ttft)), float(np.nanmedian(out.ttft_s))),
            "tpot": (float(np.median(tpot)), float(np.nanmedian(out.tpot_s)))}


def latency_check(out: Path, *, rates: str = "4,10", point_duration: str = "3s", rate: float = 3.0,
                  duration: str = "5s", mix: Mix = OTHER, prefix_caching: bool = False) -> dict[str, tuple[float, float]]:
    server = [a for a in SERVER if a != "--no-prefix-caching"] if prefix_caching else SERVER
    with embedded_server(server) as url:
        model = calibrate(url, out, rates, point_duration)
        goodput("run", "--url", url, "--rate", str(rate), "--duration", duration, "--output", str(out / "other"),
                "--no-html", *mix.args(), *COMMON)
    return replay_medians(model, out / "other", mix)


def capacity_table(out: Path, slo: Sequence[str], attainment: float) -> str:
    with embedded_server(SERVER) as url:
        model = calibrate(url, out, "2,4,8,12,16", "15s")
        goodput("capacity", "--url", url, "--attainment", str(attainment), "--point-duration", "20s",
                "--output", str(out / "capacity"), "--min-rate", "0.5", "--max-rate", "12", "--no-html",
                *(f"--slo={s}" for s in slo), *OTHER.args(), *COMMON)
    measured = json.loads((out / "capacity" / "capacity.json").read_text())["capacity"]["rate"]
    goodput("predict", "--server-model", str(model), "--capacity", "--attainment", str(attainment),
            "--requests", "2000", "--json", str(out / "predict.json"), *(f"--slo={s}" for s in slo),
            *OTHER.args(), "--tokenizer", "bytes")
    cap = json.loads((out / "predict.json").read_text())["capacity"]
    err = (cap["rate"] - measured) / measured if measured else float("nan")
    return (f"| workload | measured | predicted (band) | error |\n|---|---|---|---|\n"
            f"| prompt {OTHER.prompt_tokens}, output {OTHER.output_tokens} | {measured:.2f} req/s | "
            f"{cap['rate']:.2f} ({cap['low']:.2f}-{cap['high']:.2f}) req/s | {err:+.1%} |")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--slo", action="append", default=None)
    parser.add_argument("--attainment", type=float, default=0.9)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    print(capacity_table(args.out, args.slo or ["ttft=1s"], args.attainment))
    return 0


if __name__ == "__main__":
    sys.exit(main())
