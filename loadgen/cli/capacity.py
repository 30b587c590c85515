"""`goodput capacity`: every `goodput run` option (and --config) applies to each probe; the search's own
options set the target and its budget. See `loadgen.sweep.capacity` and docs/capacity-search.md."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from loadgen.cli.cost_options import COST, GPU_HOUR_COST_HELP, GPUS_PER_REPLICA_HELP, TARGET_RATE_HELP
from loadgen.cli.run_params import run_spec_values, with_run_options
from loadgen.spec import OUTPUTS

if TYPE_CHECKING:
    from loadgen.run import RunDir
    from loadgen.sweep import CapacityJob
    from metrics.capacity_search import Method

SEARCH = "Capacity search"

CAPACITY_HELP = """Find the highest request rate whose SLO attainment meets a target, and say how sure that is.

Each probe is an open-loop run at one rate (DIR/points/<point>/). A rate passes when the confidence
interval of its attainment (good requests / measured requests) lies above --attainment, fails when it
lies below; one whose interval straddles the target is run again rather than guessed. The search
brackets the capacity and bisects until the bracket is within --tolerance or --max-points runs are made.
The capacity is the highest rate shown to pass, never a rate that was not. Probes where the load
generator itself fell behind are not taken as evidence. Without --max-rate a closed-loop run at
--concurrency (default 256) measures the throughput ceiling first.

Writes DIR/capacity.json, DIR/capacity.html (plots; --no-html: none) and prints a line such as
'capacity 6.3 req/s at 90 % attainment (95 % conf.; bracket 6.3–7.1 req/s; 7 points, 2,940 requests)'.
--threshold 'capacity:rate >= 6' (or --config) judges it: exit 99 when it fails. --gpu-hour-cost adds
the cost per million output tokens and per million requests at the capacity (and --target-rate the
replicas a rate needs) to the line, capacity.json ('cost') and the page.

Exit codes: 0 done; 1 a probe could not run; 99 a threshold failed; 130 interrupted; 2 usage error.

\b
Examples:
  goodput capacity --url http://127.0.0.1:8000 --slo ttft=500ms \\
      --slo tpot=50ms --attainment 0.9 --output runs/cap
  goodput capacity --url http://127.0.0.1:8000 --slo ttft=1s \\
      --min-rate 1 --max-rate 20 --point-duration 30s
  goodput capacity --config loadtest.yaml --threshold 'capacity:rate >= 6' \\
      --junit capacity.xml
  goodput capacity --url "$URL" --slo ttft=500ms --gpu-hour-cost 2.50 \\
      --gpus-per-replica 2 --target-rate 40
  goodput capacity --url "$URL" --slo ttft=500ms --baseline runs/cap-main \\
      --threshold 'capacity:rate >= baseline * 0.95'
"""


def _fraction(text: str, flag: str) -> float:
    raw = text.strip()
    try:
        return float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise ValueError(f"{flag} expects a fraction or a percentage (0.9 or 90%), got {text!r}") from None


def _capacity_options(
    attainment: Annotated[str, typer.Option(help="Target SLO attainment: the share of requests that must be good (0.9 or 90%).", rich_help_panel=SEARCH)] = "0.9",
    confidence: Annotated[float, typer.Option(help="Confidence of each pass/fail verdict's interval (two-sided).", rich_help_panel=SEARCH)] = 0.95,
    interval: Annotated[str, typer.Option(help="Interval of a proportion: wilson or clopper-pearson (exact, wider).", rich_help_panel=SEARCH)] = "wilson",
    min_rate: Annotated[float | None, typer.Option(help="Lowest rate to consider, req/s (default: halve from the first failure, down to the lowest rate a point of this length can reach a verdict at).", rich_help_panel=SEARCH)] = None,
    max_rate: Annotated[float | None, typer.Option(help="Highest rate to consider, req/s (default: none: the search starts at 0.75 x a measured throughput ceiling and doubles while rates pass).", rich_help_panel=SEARCH)] = None,
    point_duration: Annotated[str | None, typer.Option(help="Length of each probe (default 60s, or --duration / --requests when given).", rich_help_panel=SEARCH)] = None,
    point_requests: Annotated[int | None, typer.Option(help="Requests per probe (with --point-duration: whichever ends first).", rich_help_panel=SEARCH)] = None,
    max_points: Annotated[int, typer.Option(help="Runs at most, every run counted (a repeat, the ceiling).", rich_help_panel=SEARCH)] = 12,
    tolerance: Annotated[str, typer.Option(help="Stop when the bracket is this narrow, relative to its lower end (5% or 0.05).", rich_help_panel=SEARCH)] = "5%",
    gpu_hour_cost: Annotated[float | None, typer.Option(help=GPU_HOUR_COST_HELP + " At the SLO capacity.", rich_help_panel=COST)] = None,
    gpus_per_replica: Annotated[int | None, typer.Option(help=GPUS_PER_REPLICA_HELP + " Default: 1.", rich_help_panel=COST)] = None,
    target_rate: Annotated[float | None, typer.Option(help=TARGET_RATE_HELP, rich_help_panel=COST)] = None,
    html: Annotated[bool, typer.Option("--html/--no-html", help="Write DIR/capacity.html (attainment and its interval against rate, the bracket, the probes in order; one self-contained file) at the end, and each probe's report.html.", rich_help_panel=OUTPUTS)] = True,
) -> None:
    """The search's own options (their signature is what Typer reads)."""


@dataclass(frozen=True, slots=True)
class SearchOptions:
    """The search's own options (and --config) as Typer parsed them (their types: `_capacity_options`;
    `interval` is Typer's text until `_job`'s SearchSettings refuses one that is not a Method)."""

    config: Path | None
    attainment: str
    confidence: float
    interval: Method
    min_rate: float | None
    max_rate: float | None
    point_duration: str | None
    point_requests: int | None
    max_points: int
    tolerance: str
    gpu_hour_cost: float | None
    gpus_per_replica: int | None
    target_rate: float | None


def capacity(ctx: typer.Context, **options: Any) -> int:
    from loadgen.sweep import run_capacity

    own = SearchOptions(
        config=options["config"], attainment=options["attainment"], confidence=options["confidence"],
        interval=options["interval"], min_rate=options["min_rate"], max_rate=options["max_rate"],
        point_duration=options["point_duration"], point_requests=options["point_requests"],
        max_points=options["max_points"], tolerance=options["tolerance"], gpu_hour_cost=options["gpu_hour_cost"],
        gpus_per_replica=options["gpus_per_replica"], target_rate=options["target_rate"])
    try:
        job, run_dir = _job(ctx, own)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    code = run_capacity(job, run_dir)
    if code:
        raise typer.Exit(code)
    return 0


def _job(ctx: typer.Context, options: SearchOptions) -> tuple[CapacityJob, RunDir]:
    from dataclasses import replace

    from loadgen.cli.cost_options import parse_cost_options
    from loadgen.run import plan_run
    from loadgen.spec import GateSpec, build_spec
    from loadgen.sweep import (
        DEFAULT_CEILING_CONCURRENCY,
        DEFAULT_POINT_DURATION_S,
        CapacityJob,
        capacity_gate_plan,
        plan_point,
        point_length,
        point_spec,
        prepare_sweep_dir,
        with_floor,
    )
    from loadgen.workload import parse_duration_flag
    from metrics import SLO
    from metrics.capacity_search import SearchSettings
    from metrics.results import POINTS_DIR

    costs = parse_cost_options(options.gpu_hour_cost, options.gpus_per_replica, options.target_rate)
    values, explicit = run_spec_values(ctx, options.config)
    spec, secrets = build_spec(values)
    if spec.metrics.slo == SLO():
        raise ValueError("goodput capacity needs an SLO (--slo ttft=500ms --slo tpot=50ms, or slo: in --config): "
                         "attainment is the share of requests that meet it")
    settings = SearchSettings(target=_fraction(options.attainment, "--attainment"),
                              confidence=options.confidence, method=options.interval,
                              tolerance=_fraction(options.tolerance, "--tolerance"),
                              max_points=options.max_points, min_rate=options.min_rate,
                              max_rate=options.max_rate, start_rate=None if options.max_rate else 1.0)
    duration = options.point_duration
    length = point_length(spec, explicit, requests=options.point_requests,
                          default_duration_s=DEFAULT_POINT_DURATION_S,
                          duration_s=parse_duration_flag(duration, "--point-duration") if duration else None)
    settings = with_floor(settings, length)
    g = spec.gate
    gate = capacity_gate_plan(g.thresholds, baseline=Path(g.baseline) if g.baseline else None,
                              junit=Path(g.junit) if g.junit else None,
                              markdown=Path(g.markdown) if g.markdown else None) if g.enabled else None
    if g.abort_thresholds:
        raise ValueError("--abort-on-fail stops a run; a capacity search is judged once, at the end")
    probe_spec = replace(spec, gate=GateSpec())  # the probes carry no thresholds: the capacity does
    ceiling = None
    if options.max_rate is None:
        ceiling = values.concurrency if "concurrency" in explicit and values.concurrency \
            else DEFAULT_CEILING_CONCURRENCY
    # Everything a probe needs that can be wrong (dataset, tokenizer, schedule) fails here, before anything is sent.
    sample = plan_point(1, "rate", settings.min_rate or settings.max_rate or 1.0, length, seed=spec.load.seed)
    plan_run(point_spec(probe_spec, sample, run_dir=Path(POINTS_DIR) / "check", server_url="http://127.0.0.1:9"),
             secrets)
    output = spec.outputs.output
    run_dir = prepare_sweep_dir(Path(output) if output is not None else None, kind="capacity", overwrite=spec.outputs.overwrite)
    job = CapacityJob(spec=probe_spec, secrets=secrets, settings=settings, length=length,
                      ceiling_concurrency=ceiling, gate=gate, quiet=spec.outputs.quiet,
                      absolute_lag_s=spec.metrics.lag_threshold_s if "lag_threshold" in explicit else None,
                      costs=costs)
    return job, run_dir


# --html/--no-html is the search's own (its help says what a search writes); it sets the run option of that name.
with_run_options(capacity, _capacity_options, drop=frozenset({"print_config", "html"}))
