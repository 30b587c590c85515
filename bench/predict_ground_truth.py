"""Ground truth for `goodput calibrate` + `goodput predict`: on a sim-engine server whose settings the fit
is not told (GPU preset, efficiency, step overhead), calibrate from a sweep of one workload, then
predict two other workloads (another prompt/output mix, and a trace with prefix reuse) and measure them on
the same server.

- `latency_check` (the CI version, tests/predict/test_ground_truth.py): a workload run once at one rate;
  the prediction replays the run's own send times, so only the model's error remains; median TTFT and
  TPOT are compared.
- `main` (the full protocol, bench/README.md): `goodput capacity` measures each workload's capacity and
  `goodput predict --capacity` predicts it; the table gives both and the error, and for the trace also
  the prediction of a model told the server has no prefix cache.

    .venv/bin/python bench/predict_ground_truth.py --out /tmp/pgt

The server caches prefixes. The synthetic mixes use `--cache-bust`, so every point of the sweep and of the
capacity search (all drawn from one seed, the same prompts) starts cold. The trace cannot (its reuse is
the point): each probe replays the trace from its start, and a probe's own blocks outnumber the KV pool
(2,000 blocks), so the least-recently-used pool has let the previous probe's go before the next probe
reaches them (the table gives the range of the probes' measured shares of cached prompt tokens).
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

from bench.predict_workloads import Mix, synthetic, trace_mix, write_prefix_trace
from loadgen.cli.run import run_defaults
from loadgen.predict.requests import build_requests
from loadgen.predict.step_model import load_model
from loadgen.predict.virtual import simulate
from loadgen.run import embedded_server
from loadgen.spec.build import build_spec
from metrics.latency import derive
from metrics.records import frame_from_records
from metrics.records.record import read_records

GOODPUT = str(Path(sys.executable).with_name("goodput"))
COMMON = ["--tokenizer", "bytes", "--ignore-eos", "--server-metrics", "none", "--quiet", "--lag-threshold", "100ms"]
CALIBRATION = synthetic("uniform:64:512", "uniform:16:64")
OTHER = synthetic("1024", "32")


@dataclass(frozen=True, slots=True)
class Setup:
    """A server and what the fit is told of it (`limits`), and the protocol's rates and lengths."""

    server: tuple[str, ...]
    limits: tuple[str, ...]
    calibration_rates: str
    calibration_point: str
    capacity_point: str  # each capacity point's window, measured and predicted alike
    calibration: Mix = CALIBRATION  # the workload of the calibration sweep
    scrape_calibration: bool = False  # scrape the server's /metrics in the sweep (its own prefill timer)


# What the fit is told: the scheduler's limits. What it is not told: the GPU, the efficiency, the overhead.
SIM_LIMITS = ("--max-num-seqs", "64", "--max-num-batched-tokens", "512", "--num-blocks", "2000")
SIM = Setup(server=("--engine", "sim", "--sim-model", "Llama-3.1-8B", "--sim-gpu", "L4", "--sim-efficiency", "0.6",
                    "--sim-step-overhead-ms", "2", *SIM_LIMITS),
            limits=SIM_LIMITS, calibration_rates="2,4,8,12,16", calibration_point="15s", capacity_point="20s")


@dataclass(frozen=True, slots=True)
class Target:
    """A workload whose capacity is measured and predicted, and the rate range the search looks in."""

    mix: Mix
    min_rate: float
    max_rate: float
    name: str


def goodput(*args: str) -> None:
    subprocess.run([GOODPUT, *args], check=True, stdout=subprocess.DEVNULL)


def calibrate(url: str, out: Path, setup: Setup, rates: str | None = None, point: str | None = None) -> Path:
    common = [a for a in COMMON if a not in ("--server-metrics", "none")] if setup.scrape_calibration else COMMON
    goodput("sweep", "--url", url, "--rates", rates or setup.calibration_rates, "--point-duration",
            point or setup.calibration_point, "--output", str(out / "calibration"), *setup.calibration.args(),
            *common)
    model = out / "server-model.json"
    goodput("calibrate", str(out / "calibration"), *setup.limits, "--output", str(model))
    return model


def without_prefix_cache(model: Path) -> Path:
    """The same model told the server caches no prefix (what a predictor that ignored the cache would do)."""
    doc = json.loads(model.read_text())
    doc["limits"]["enable_prefix_caching"] = False
    path = model.with_name("server-model-no-prefix-cache.json")
    path.write_text(json.dumps(doc))
    return path


def replay(model_path: Path, run_dir: Path, mix: Mix) -> dict[str, tuple[float, float]]:
    """(measured, predicted) median TTFT and TPOT and mean TTFT of one run, the prediction at the run's own
    send times."""
    records = sorted(read_records(str(run_dir / "records.jsonl")), key=lambda r: r.id)
    values = run_defaults()
    values.update(mix.values())
    values.update(tokenizer="bytes", requests=len(records), duration=None)
    reqs = build_requests(build_spec(values)[0])
    offsets = np.array([r.intended_ns for r in records], dtype=np.float64) / 1e9
    out = simulate(load_model(model_path), reqs.prompts, reqs.max_tokens, offsets - offsets[0])
    ttft = np.array([(r.chunk_ns[0] - r.intended_ns) / 1e9 for r in records if r.chunk_ns])
    tpot = derive.tpot_s(frame_from_records(records))  # per output token: a chunk may carry several
    return {"ttft": (float(np.median(ttft)), float(np.nanmedian(out.ttft_s))),
            "ttft_mean": (float(np.mean(ttft)), float(np.nanmean(out.ttft_s))),
            "tpot": (float(np.nanmedian(tpot)), float(np.nanmedian(out.tpot_s)))}


def measure_run(url: str, out: Path, mix: Mix, rate: float, duration: str) -> Path:
    goodput("run", "--url", url, "--rate", str(rate), "--duration", duration, "--output", str(out), "--no-html",
            *mix.args(), *COMMON)
    return out


def cached_ratio(run_dir: Path) -> float:
    share = json.loads((run_dir / "summary.json").read_text())["tokens"]["prefix_cache"]
    return float(share.get("cached_ratio") or 0.0)


def measure_capacity(url: str, out: Path, target: Target, setup: Setup, slo: Sequence[str],
                     attainment: float) -> dict[str, object]:
    where = out / f"capacity-{target.name}"
    goodput("capacity", "--url", url, "--attainment", str(attainment), "--point-duration", setup.capacity_point,
            "--output", str(where), "--min-rate", str(target.min_rate), "--max-rate", str(target.max_rate),
            "--no-html", *(f"--slo={s}" for s in slo), *target.mix.args(), *COMMON)
    doc = json.loads((where / "capacity.json").read_text())
    cached = [cached_ratio(where / "points" / p["label"]) for p in doc["points"]]
    cap = doc["capacity"]
    return {"rate": cap["rate"], "upper": cap["upper"], "points": cap["points"], "requests": cap["requests"],
            "cached": (min(cached), max(cached))}


def predict_capacity(model: Path, out: Path, target: Target, setup: Setup, slo: Sequence[str],
                     attainment: float) -> dict[str, float]:
    """The predicted capacity of the experiment `measure_capacity` runs: its points, as they send (the same
    length, exact-rate send times and warm-up: on a server past its sustained rate the queue grows with the
    window, so the window decides the capacity)."""
    path = out / f"predict-{target.name}-{model.stem}.json"
    goodput("predict", "--server-model", str(model), "--capacity", "--attainment", str(attainment),
            "--point-duration", setup.capacity_point, "--json", str(path), *(f"--slo={s}" for s in slo),
            *target.mix.args(), "--tokenizer", "bytes")
    return json.loads(path.read_text())["capacity"]  # type: ignore[no-any-return]


def _row(target: Target, measured: dict[str, object], cap: dict[str, float], extra: str) -> str:
    rate = float(measured["rate"] or 0.0)  # type: ignore[arg-type]
    err = (cap["rate"] - rate) / rate if rate else float("nan")
    lo, hi = measured["cached"]  # type: ignore[misc]
    return (f"| {target.mix.label} | {rate:.2f} req/s (bracket {rate:.2f}-{measured['upper']}, "
            f"{measured['points']} points, {measured['requests']} requests; cached {lo:.0%}-{hi:.0%}) | "
            f"{cap['rate']:.2f} ({cap['low']:.2f}-{cap['high']:.2f}) req/s | {err:+.1%} | {extra} |")


def capacity_table(out: Path, setup: Setup, targets: Sequence[Target], slo: Sequence[str],
                   attainment: float) -> str:
    measured: dict[str, dict[str, object]] = {}
    with embedded_server(list(setup.server)) as url:
        model = calibrate(url, out, setup)
        for t in targets:
            measured[t.name] = measure_capacity(url, out, t, setup, slo, attainment)
    rows = ["| workload | measured (`goodput capacity`) | predicted (band ±1 s.e.) | error | "
            "predicted, the model told there is no prefix cache |", "|---|---|---|---|---|"]
    for t in targets:
        cap = predict_capacity(model, out, t, setup, slo, attainment)
        blind = predict_capacity(without_prefix_cache(model), out, t, setup, slo, attainment) \
            if "cache_bust" not in t.mix.settings else None  # a busted mix has nothing to cache
        rows.append(_row(t, measured[t.name], cap, f"{blind['rate']:.2f} req/s" if blind else "-"))
    return "\n".join(rows)


def latency_check(url: str, model: Path, out: Path, mix: Mix, *, rate: float = 3.0,
                  duration: str = "5s") -> dict[str, tuple[float, float]]:
    """The CI version's comparison: one run of `mix` at `rate` on the server at `url`, against `model`."""
    return replay(model, measure_run(url, out, mix, rate, duration), mix)


def sim_targets(out: Path) -> list[Target]:
    trace = write_prefix_trace(out / "prefix-trace.jsonl", 4000)
    return [Target(OTHER, 0.5, 12, "mix"), Target(trace_mix(trace), 1, 24, "trace")]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--slo", action="append", default=None)
    parser.add_argument("--attainment", type=float, default=0.9)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    print(capacity_table(args.out, SIM, sim_targets(args.out), args.slo or ["ttft=1s"], args.attainment))
    return 0


if __name__ == "__main__":
    sys.exit(main())
