"""A runner's plan made as a run makes it: an open loop's schedule comes from loadgen.workload.schedule, the
one place a run's schedule is drawn (the runner dispatches on the offsets it is given and draws none)."""

from __future__ import annotations

from loadgen.dispatch import RunPlan
from loadgen.spec.sections import LoadSpec
from loadgen.workload.arrivals import Arrival
from loadgen.workload.schedule import run_schedule


def run_plan(arrival: Arrival, *, duration_s: float | None = None, count: int | None = None, seed: int = 0,
             grace_s: float = 10.0) -> RunPlan:
    schedule = None
    if arrival.open_loop:
        schedule = run_schedule(LoadSpec(arrival=arrival, duration_s=duration_s, requests=count, seed=seed))
    return RunPlan(arrival=arrival, duration_s=duration_s, count=count, seed=seed, grace_s=grace_s,
                   offsets=schedule.offsets if schedule is not None else None)
