"""Predicted latency and SLO attainment per rate, and the predicted capacity with its band.

Each rate is one virtual run of the workload (loadgen.predict.virtual). Attainment is the DistServe test
of metrics.slo over every request. The capacity is the highest rate whose attainment meets the target,
found by doubling then bisecting (each probe is a virtual run, so the search costs seconds); its band
repeats the search with every step-time parameter one standard error above, then below, its fit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from loadgen.predict.step_model import StepModel
from loadgen.predict.virtual import Outcome, Routing, simulate
from metrics.slo import SLO, good_requests

PERCENTILES = (50, 90, 99)
METRICS = ("ttft", "tpot", "e2e")
RequestsAt = Callable[[float], tuple[list[list[int]], list[int], np.ndarray]]


@dataclass(frozen=True, slots=True)
class Fleet:
    replicas: int = 1
    routing: Routing = "round-robin"


@dataclass(frozen=True, slots=True)
class Point:
    rate: float
    requests: int
    latency: dict[str, dict[str, float | None]]  # metric → p50/p90/p99 seconds
    attainment: float | None  # None without an SLO
    output_tps: float
    preemptions: int

    def to_dict(self) -> dict[str, Any]:
        return {"rate": self.rate, "requests": self.requests, "latency_s": self.latency,
                "attainment": self.attainment, "output_tokens_per_s": self.output_tps,
                "preemptions": self.preemptions}


def percentiles(values: np.ndarray) -> dict[str, float | None]:
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return {f"p{p}": None for p in PERCENTILES}
    return {f"p{p}": float(v) for p, v in zip(PERCENTILES, np.percentile(finite, PERCENTILES), strict=True)}


def attainment(out: Outcome, slo: SLO) -> float:
    """Good requests / requests (every virtual request ends ok with content)."""
    n = out.ttft_s.size
    good = good_requests(slo, ok_with_content=np.ones(n, dtype=bool), ttft_s=out.ttft_s, tpot_s=out.tpot_s,
                         e2e_s=out.e2e_s, max_itl_s=out.max_itl_s, fluidity=np.full(n, np.nan))
    return float(good.mean()) if n else 0.0


def point(model: StepModel, rate: float, requests_at: RequestsAt, slo: SLO | None, fleet: Fleet = Fleet()) -> Point:
    prompts, max_tokens, offsets = requests_at(rate)
    out = simulate(model, prompts, max_tokens, offsets, replicas=fleet.replicas, routing=fleet.routing)
    lat = {"ttft": percentiles(out.ttft_s), "tpot": percentiles(out.tpot_s), "e2e": percentiles(out.e2e_s)}
    tps = float(out.output_tokens.sum()) / out.duration_s if out.duration_s > 0 else 0.0
    return Point(rate, len(prompts), lat, attainment(out, slo) if slo is not None else None, tps, out.preemptions)


def capacity(model: StepModel, requests_at: RequestsAt, slo: SLO, target: float, *, start: float = 1.0,
             tolerance: float = 0.01, max_probes: int = 40, fleet: Fleet = Fleet()) -> float:
    """Highest rate (to `tolerance`, relative) whose predicted attainment is >= target; 0 when none is."""
    def passes(rate: float) -> bool:
        out = simulate(model, *requests_at(rate), replicas=fleet.replicas, routing=fleet.routing)
        return attainment(out, slo) >= target

    lo, hi, probes = 0.0, start, 0
    while passes(hi) and probes < max_probes:
        lo, hi, probes = hi, hi * 2, probes + 1
    if lo == 0.0:  # start failed: halve down
        while not passes(hi) and probes < max_probes:
            hi, probes = hi / 2, probes + 1
            if hi < start / 1024:
                return 0.0
        lo, hi = hi, hi * 2
    while hi - lo > tolerance * lo and probes < max_probes:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if passes(mid) else (lo, mid)
        probes += 1
    return lo


def capacity_band(model: StepModel, requests_at: RequestsAt, slo: SLO, target: float,
                  start: float = 1.0, fleet: Fleet = Fleet()) -> dict[str, float]:
    """The capacity, and again with every parameter one standard error slower (low) and faster (high)."""
    mid = capacity(model, requests_at, slo, target, start=start, fleet=fleet)
    seed = mid if mid > 0 else start
    low = capacity(model.shifted(+1.0), requests_at, slo, target, start=seed, fleet=fleet)
    high = capacity(model.shifted(-1.0), requests_at, slo, target, start=seed, fleet=fleet)
    return {"rate": mid, "low": min(low, mid), "high": max(high, mid)}


def _cells(p: Point, metric: str, keys: tuple[str, ...], scale: float) -> str:
    vals = [p.latency[metric][k] for k in keys]
    return "/".join("-" if v is None or math.isnan(v) else f"{v * scale:.0f}" if scale > 1 else f"{v:.2f}"
                    for v in vals)


def format_table(points: list[Point]) -> str:
    head = f"{'rate':>8} {'TTFT p50/p90/p99 ms':>22} {'TPOT p50/p90/p99 ms':>22} {'E2E p50/p99 s':>14} {'attain':>7}"
    lines = [head]
    pcts = ("p50", "p90", "p99")
    for p in points:
        att = "-" if p.attainment is None else f"{p.attainment:.1%}"
        lines.append(f"{p.rate:>8.3g} {_cells(p, 'ttft', pcts, 1e3):>22} {_cells(p, 'tpot', pcts, 1e3):>22} "
                     f"{_cells(p, 'e2e', ('p50', 'p99'), 1.0):>14} {att:>7}")
    return "\n".join(lines)
