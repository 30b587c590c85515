"""Predicted latency and SLO attainment per rate, and the predicted capacity with its band.

Each rate is one virtual run of the workload (loadgen.predict.virtual). Attainment is the DistServe test
of metrics.slo over every request. The capacity is the highest rate whose attainment meets the target,
found by doubling (or halving) from a start rate then bisecting, and only a rate a probe showed to meet the
target is returned (each probe is a virtual run, so the search costs seconds); its band repeats the search
from the same start with every step-time parameter one standard error above, then below, its fit. Where the
rates predicted show attainment that is not monotone in the rate, a note says so.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from loadgen.predict.requests import Requests
from loadgen.predict.step_model import StepModel
from loadgen.predict.virtual import Outcome, Routing, simulate
from metrics import SLO, good_requests
from metrics.results import PredictedBand, PredictedPoint

PERCENTILES = (50, 90, 99)
METRICS = ("ttft", "tpot", "e2e")
RequestsAt = Callable[[float], Requests]


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

    def view(self) -> PredictedPoint:
        """The point as predict.json has it."""
        return PredictedPoint(self.rate, self.requests, self.latency, self.attainment, self.output_tps, self.preemptions)


def percentiles(values: np.ndarray) -> dict[str, float | None]:
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return {f"p{p}": None for p in PERCENTILES}
    return {f"p{p}": float(v) for p, v in zip(PERCENTILES, np.percentile(finite, PERCENTILES), strict=True)}


def attainment(out: Outcome, slo: SLO, measured: np.ndarray | None = None) -> float:
    """Good requests / requests (every virtual request ends ok with content), over the `measured` ones
    (default: all)."""
    n = out.ttft_s.size
    good = good_requests(slo, ok_with_content=np.ones(n, dtype=bool), ttft_s=out.ttft_s, tpot_s=out.tpot_s,
                         e2e_s=out.e2e_s, max_itl_s=out.max_itl_s, fluidity=np.full(n, np.nan))
    if measured is not None:
        good = good[measured]
    return float(good.mean()) if good.size else 0.0


def run(model: StepModel, requests: Requests, fleet: Fleet) -> Outcome:
    return simulate(model, requests.prompts, requests.max_tokens, requests.offsets, replicas=fleet.replicas,
                    routing=fleet.routing)


def point(model: StepModel, rate: float, requests_at: RequestsAt, slo: SLO | None, fleet: Fleet = Fleet()) -> Point:
    """One rate's prediction; latency and attainment of the measured requests (after a point's warm-up)."""
    requests = requests_at(rate)
    out = run(model, requests, fleet)
    m = requests.measured()
    lat = {"ttft": percentiles(out.ttft_s[m]), "tpot": percentiles(out.tpot_s[m]), "e2e": percentiles(out.e2e_s[m])}
    tps = float(out.output_tokens.sum()) / out.duration_s if out.duration_s > 0 else 0.0
    return Point(rate, int(m.sum()), lat, attainment(out, slo, m) if slo is not None else None, tps,
                 out.preemptions)


@dataclass(frozen=True, slots=True)
class Search:
    rate: float  # the highest rate shown to meet the target (0 when none is)
    probes: list[tuple[float, float]]  # (rate, attainment) of every virtual run, in the order probed


def capacity(model: StepModel, requests_at: RequestsAt, slo: SLO, target: float, *, start: float = 1.0,
             tolerance: float = 0.01, max_probes: int = 40, fleet: Fleet = Fleet()) -> Search:
    """Highest rate (to `tolerance`, relative) whose predicted attainment is >= target, doubling from `start`
    while it passes (halving while it fails), then bisecting; only a probed rate that passed is returned."""
    probes: list[tuple[float, float]] = []

    def passes(rate: float) -> bool:
        requests = requests_at(rate)
        probes.append((rate, attainment(run(model, requests, fleet), slo, requests.measured())))
        return probes[-1][1] >= target

    if passes(start):  # double while it passes
        lo, hi = start, start * 2
        while len(probes) < max_probes and passes(hi):
            lo, hi = hi, hi * 2
    else:  # halve until one passes
        hi = start
        while True:
            hi = hi / 2
            if hi < start / 1024 or len(probes) >= max_probes:
                return Search(0.0, probes)
            if passes(hi):
                lo, hi = hi, hi * 2
                break
    while hi - lo > tolerance * lo and len(probes) < max_probes:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if passes(mid) else (lo, mid)
    return Search(lo, probes)


def capacity_band(model: StepModel, requests_at: RequestsAt, slo: SLO, target: float,
                  start: float = 1.0, fleet: Fleet = Fleet()) -> PredictedBand:
    """The capacity, and again with every parameter one standard error slower (low) and faster (high): each
    search from the same `start` by the same rules, so parameters without uncertainty give the estimate
    itself; the band is widened to hold the estimate where attainment is not monotone in the parameters.
    `probes` are the estimate's (rate, attainment) pairs."""
    main = capacity(model, requests_at, slo, target, start=start, fleet=fleet)

    def end(sign: float) -> float:
        shifted = model.shifted(sign)
        return main.rate if shifted == model else \
            capacity(shifted, requests_at, slo, target, start=start, fleet=fleet).rate

    return PredictedBand(main.rate, min(end(+1.0), main.rate), max(end(-1.0), main.rate), tuple(main.probes))


def monotone_note(probed: list[tuple[float, float]], target: float,
                  others: Sequence[tuple[float, float, str]] = ()) -> str | None:
    """One line when the predicted attainment of the rates predicted is not monotone in the rate: a rate
    meeting the target above one that does not, else a rate attaining more than a lower one. `probed`: the
    search's (rate, attainment); `others`: (rate, attainment, where it came from: "--rates", "--measured").
    Each rate named says where it came from, and what is said of the capacity is of the search alone."""
    sources: dict[float, set[str]] = {}
    for r, _ in probed:
        sources.setdefault(r, set()).add("search")
    for r, _, where in others:
        sources.setdefault(r, set()).add(where)
    pts = sorted(set(probed) | {(r, a) for r, a, _ in others})

    def named(r: float) -> str:
        return f"{r:.3g} req/s ({', '.join(sorted(sources[r], key=lambda w: (w != 'search', w)))})"

    fails = [r for r, a in pts if a < target]
    above = [(r, a) for r, a in pts if a >= target and fails and r > fails[0]]
    if above:
        (r, a), low = above[-1], fails[0]
        return (f"predicted attainment is not monotone in the rate: {named(r)} meets {target:.0%} ({a:.1%}) "
                f"where {named(low)}, lower, does not ({dict(pts)[low]:.1%}); the capacity is the highest rate "
                f"the search's probes showed to meet it below the lowest they showed not to, so a rate above "
                f"it may meet it too")
    for (r0, a0), (r1, a1) in pairwise(pts):
        if a1 > a0:
            return (f"predicted attainment is not monotone in the rate: {a1:.1%} at {named(r1)}, "
                    f"above {a0:.1%} at {named(r0)}")
    return None


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
