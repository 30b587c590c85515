"""The points of a sweep or a capacity search: what each one runs, and the complete run spec it gets.

A point is one ordinary run (`goodput run`'s spec with its load replaced) into `DIR/points/<label>/`, so
it can be reported, gated and compared on its own. Everything else the user set (workload, SLOs,
timeouts, Prometheus, ...) applies to every point unchanged.

Length: `--point-duration` and/or `--point-requests`; without them a point is as long as the run options
say (`--duration`, `--requests`), else the command's default.

Warm-up: a server that was idle, or still draining the previous point's queue, is not in the steady
state the point is meant to measure, so each point leaves its start out of the measurement: `--warmup`
when it was given, else 10 % of the point's planned length (its duration, or requests / rate). A
closed-loop point bounded by a request count has no planned length and no default warm-up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

from loadgen.spec import GateSpec, LoadSpec, OutputSpec, RunSpec, TargetSpec
from loadgen.workload import Arrival, parse_arrival
from metrics.results import PointKind as PointKind
from metrics.results import PointPlan as PointPlan

DEFAULT_WARMUP_FRACTION = 0.1
OPEN_LOOP_KINDS = ("constant", "poisson", "gamma")  # a sweep point keeps one of these; ramp becomes poisson


@dataclass(frozen=True, slots=True)
class PointLength:
    """How long every point runs; `warmup_s` None: DEFAULT_WARMUP_FRACTION of each point's length."""

    duration_s: float | None
    requests: int | None
    warmup_s: float | None = None

    def __post_init__(self) -> None:
        if self.duration_s is None and self.requests is None:
            raise ValueError("a point needs a duration or a request count")


def format_number(value: float) -> str:
    """A rate as people write it, never in exponent form: 8, 2.5, 0.125."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.6f}".rstrip("0").rstrip(".")


def point_label(index: int, kind: PointKind, value: float, *, role: str = "point") -> str:
    """`03-rate-2.5`, `01-concurrency-16`, `00-ceiling-c256`: sorted as they ran, named by their load."""
    if role == "ceiling":
        return f"{index:02d}-ceiling-c{format_number(value)}"
    return f"{index:02d}-{kind}-{format_number(value)}"


def planned_length_s(kind: PointKind, value: float, length: PointLength) -> float | None:
    """How long the point is planned to dispatch for (None: a count-bound closed loop cannot say)."""
    spans = []
    if length.duration_s is not None:
        spans.append(length.duration_s)
    if length.requests is not None and kind == "rate":
        spans.append(length.requests / value)
    return min(spans) if spans else None


def plan_point(index: int, kind: PointKind, value: float, length: PointLength, *, seed: int,
               role: str = "point") -> PointPlan:
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"a point's {kind} must be > 0, got {value:g}")
    if kind == "concurrency" and not float(value).is_integer():
        raise ValueError(f"a concurrency must be a whole number, got {value:g}")
    warmup = length.warmup_s
    if warmup is None:
        span = planned_length_s(kind, value, length)
        warmup = round(DEFAULT_WARMUP_FRACTION * span, 3) if span is not None else 0.0
    return PointPlan(label=point_label(index, kind, value, role=role), kind=kind, value=value,
                     duration_s=length.duration_s, requests=length.requests, warmup_s=warmup, seed=seed, role=role)


def point_arrival(base: Arrival, point: PointPlan) -> Arrival:
    if point.kind == "concurrency":
        return parse_arrival("concurrency", rate=None, burstiness=1.0, rate_end=None, concurrency=int(point.value))
    if base.kind == "trace":  # the trace replayed at its own timestamps, rescaled to the point's mean rate
        return parse_arrival("trace", rate=point.value, burstiness=1.0, rate_end=None, concurrency=None)
    kind = base.kind if base.kind in OPEN_LOOP_KINDS else "poisson"
    return parse_arrival(kind, rate=point.value, burstiness=base.burstiness if kind == "gamma" else 1.0,
                         rate_end=None, concurrency=None)


def point_load(base: LoadSpec, point: PointPlan) -> LoadSpec:
    """The load of one point: its arrival, length, warm-up and seed (what `goodput predict --point-duration`
    replays too; an open-loop point's send times are loadgen.sweep.exact_rate's)."""
    # Failures at a rate beyond capacity are what a point measures, not a run that did not work: no
    # --max-failed limit on a point (nothing succeeding, or the first requests all failing alike, still is).
    return replace(base, arrival=point_arrival(base.arrival, point), duration_s=point.duration_s,
                   requests=point.requests, warmup_s=point.warmup_s, seed=point.seed, max_failed="100%")


def point_spec(base: RunSpec, point: PointPlan, *, run_dir: Path, server_url: str | None,
               gate: GateSpec | None = None) -> RunSpec:
    """The run spec of one point. `server_url`: the reference server the sweep started for all its points
    (the spec then says what `embedded` resolved to, so the point sends what a plain run would);
    `gate`: the point's own thresholds (default: none)."""
    spec = replace(
        base,
        load=point_load(base.load, point),
        outputs=OutputSpec(output=str(run_dir), overwrite=True, quiet=True, html=base.outputs.html),
        gate=gate if gate is not None else GateSpec(),
    )
    if server_url is not None and base.target.embedded:
        spec = replace(
            spec,
            target=TargetSpec(url=server_url, model=base.target.model, endpoint=base.target.endpoint),
            request=replace(base.request, ignore_eos=base.request.resolved_ignore_eos(True)),
            workload=replace(base.workload, tokenizer=base.workload.token_counter(True)),
        )
    return spec


def point_gate(base: RunSpec, run_dir: Path) -> GateSpec:
    """A sweep point's thresholds: the run's own, with --junit and --markdown written into the point's
    directory under the names given (one file per point, never overwritten by the next)."""
    g = base.gate
    for flag, given in (("--junit", g.junit), ("--markdown", g.markdown)):
        if given and Path(given).name in ("", ".", ".."):
            raise ValueError(f"{flag} {given!r} names no file (a sweep writes it into each point's directory)")
    return replace(g, junit=str(run_dir / Path(g.junit).name) if g.junit else None,
                   markdown=str(run_dir / Path(g.markdown).name) if g.markdown else None)


def point_length(spec: RunSpec, explicit: set[str], *, duration_s: float | None, requests: int | None,
                 default_duration_s: float | None) -> PointLength:
    """How long each point runs. `explicit`: the run options the user set (flags, environment or config
    file). --point-duration / --point-requests first; else --duration / --requests as given; else the
    command's default (a duration), else the run's own default (a request count)."""
    if requests is not None and requests < 1:
        raise ValueError(f"--point-requests must be >= 1, got {requests}")
    if duration_s is not None and not (math.isfinite(duration_s) and duration_s > 0):
        raise ValueError(f"--point-duration must be greater than 0, got {duration_s:g}")
    warmup = spec.load.warmup_s if "warmup" in explicit else None
    if duration_s is not None or requests is not None:
        return PointLength(duration_s, requests, warmup)
    if explicit & {"duration", "requests"} or default_duration_s is None:
        return PointLength(spec.load.duration_s, spec.load.requests, warmup)
    return PointLength(default_duration_s, None, warmup)
