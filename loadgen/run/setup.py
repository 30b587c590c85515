"""From a `RunSpec` to what a run needs in hand before its first request: the workload, the gate, where the
measurement window ends, the metric settings, and the client's configuration.

`plan_run` does every check that needs more than the spec itself (the dataset, trace and tokenizer files,
the baseline run, drawing the schedule), so that a mistake is still a usage error found before anything is
sent. The schedule is drawn here once (loadgen.workload.schedule) and the runner dispatches on it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from loadgen.dispatch import RunPlan, client_config_of
from loadgen.redact import remember, secret_values
from loadgen.run.layout import summary_config_of
from loadgen.run.prometheus import PromOptions, prom_options
from loadgen.run.server_args import check_server_args
from loadgen.secrets import Secrets
from loadgen.spec import LoadSpec, RooflineSpec, RunSpec
from loadgen.types import ClientConfig
from loadgen.workload import (
    AnyWorkload,
    Arrival,
    FloatArray,
    ModelMix,
    Schedule,
    TokenCounter,
    Trace,
    build_workload,
    is_sessions,
    load_trace,
    parse_models,
    run_schedule,
)
from loadgen.workload.images import check_endpoint
from metrics.summary import SummaryConfig

if TYPE_CHECKING:
    from loadgen.run.gate import GatePlan
    from loadgen.run.roofline import RooflineSpecJSON


@dataclass(slots=True)
class RunSetup:
    spec: RunSpec
    secrets: Secrets
    workload: AnyWorkload
    gate: GatePlan | None
    schedule_end_s: float | None
    roofline: RooflineSpecJSON | None  # from --model-config/--gpu; a sim target may announce its own
    schedule: Schedule | None = None  # None: closed loop
    trace: Trace | None = None

    def rebuild_workload(self, counter: TokenCounter) -> None:
        """The same workload with prompts sized by `counter` (learnt from the server, loadgen.run.sizing)."""
        rows = self.schedule.rows if self.schedule is not None else None
        self.workload = build_workload(self.spec.workload, seed=self.spec.load.seed, embedded=self.embedded,
                                       counter=counter, trace=self.trace, rows=rows, models=self.models)

    @property
    def embedded(self) -> bool:
        return self.spec.target.embedded

    @property
    def models(self) -> ModelMix | None:
        """The `--model` mix (one model or more); None without `--model`."""
        return parse_models(self.spec.target.model) if self.spec.target.model else None

    def summary_config(self) -> SummaryConfig:
        return summary_config_of(self.spec, self.schedule_end_s)

    def run_plan(self) -> RunPlan:
        """The whole run's plan for the runner (a worker narrows it to its share, loadgen.workers.share)."""
        load = self.spec.load
        return RunPlan(arrival=load.arrival, duration_s=load.duration_s, count=load.requests, seed=load.seed,
                       grace_s=load.grace_s, offsets=self.schedule.offsets if self.schedule is not None else None)

    def local_workers(self) -> int:
        """How many processes dispatch the run on this host (1: the run's own process, no workers)."""
        return local_worker_count(self.spec.scale.workers, self.spec.load.arrival)

    def prom_options(self) -> PromOptions:
        return prom_options(self.spec.prometheus, self.secrets.pushgateway_password)


def plan_run(spec: RunSpec, secrets: Secrets, *, offsets: FloatArray | None = None) -> RunSetup:
    """ValueError (a usage error) for anything that stops the run from starting. `offsets`: an arrival
    process's schedule drawn by the caller (a sweep point's exact rate, loadgen.sweep.exact_rate), sent
    instead of a draw from the spec's seed."""
    remember(secret_values(secrets))  # scrubbed from every server text the run prints (loadgen.redact)
    w = spec.workload
    if spec.target.embedded:
        check_server_args([*spec.target.server_args, *secrets.server_args])
    trace = load_trace(w.trace, w.trace_format) if w.trace is not None else None
    schedule = run_schedule(spec.load, trace, offsets=offsets)
    workload = build_workload(w, seed=spec.load.seed, embedded=spec.target.embedded, trace=trace,
                              rows=schedule.rows if schedule is not None else None,
                              models=parse_models(spec.target.model) if spec.target.model else None)
    check_endpoint(workload, spec.target.endpoint)
    roofline = roofline_settings(spec.metrics.roofline) if spec.metrics.roofline is not None else None
    return RunSetup(spec=spec, secrets=secrets, workload=workload, gate=_gate_plan(spec),
                    schedule_end_s=schedule_end_s(spec.load, schedule, sessions=is_sessions(workload)),
                    roofline=roofline, schedule=schedule, trace=trace)


def local_worker_count(workers: int | None, arrival: Arrival, cores: int | None = None) -> int:
    """`--workers N` as given; `auto` (None): this host's cores less one for the parent, at least 1, and in a
    closed loop never more than the slots to split."""
    if workers is not None:
        return workers
    count = max(1, (cores if cores is not None else os.cpu_count() or 1) - 1)
    return count if arrival.open_loop else min(count, arrival.concurrency)


def schedule_end_s(load: LoadSpec, schedule: Schedule | None, *, sessions: bool = False) -> float | None:
    """Where the cool-down is measured back from: the duration when it is what ends dispatching, else the
    last planned send (open loop) or None (a count-bound closed loop, whose end is not known in advance:
    the metrics then take the last intended send). Known before the run, so the live exporters, the
    summary and `goodput report` after a kill all use the same window. Conversations: None, since later
    turns are meant to leave after the last session starts (their time depends on the answers).
    `schedule` is the run's own (None: a closed loop), read here, never drawn again."""
    if sessions:
        return None
    if schedule is None:
        if load.arrival.open_loop:
            raise ValueError("an open-loop run's window ends with its schedule: pass the run's schedule")
        return load.duration_s if load.requests is None else None
    offsets = schedule.offsets
    if load.duration_s is not None and (load.requests is None or offsets.size < load.requests):
        return load.duration_s
    return schedule.end_s


def roofline_settings(spec: RooflineSpec) -> RooflineSpecJSON:
    """The deployment the roofline floors are computed for, names resolved (kept in run.json)."""
    from metrics.model import resolve_gpu, resolve_model

    return {"model": spec.model_config, "model_name": resolve_model(spec.model_config).name,
            "gpu": resolve_gpu(spec.gpu).name, "tp": spec.tp, "dtype": spec.weight_dtype,
            "source": "--model-config/--gpu"}


def client_config(setup: RunSetup, *, base_url: str, model: str) -> ClientConfig:
    """The streaming client's configuration: the spec's request options and the secrets it may not hold."""
    return client_config_of(setup.spec, setup.secrets, base_url=base_url, model=model)


def _gate_plan(spec: RunSpec) -> GatePlan | None:
    """The run's gate (None when nothing is gated); its machinery is imported only when there is one."""
    if not spec.gate.enabled:
        return None
    from loadgen.run.gate import gate_plan

    return gate_plan(spec)
