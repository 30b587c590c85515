"""`goodput sweep`: every `goodput run` option (and --config) applies to each point; the sweep's own
options pick the points. See `loadgen.sweep.sweep`."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from loadgen.cli.run_params import run_spec_values, with_run_options
from loadgen.spec import OUTPUTS

if TYPE_CHECKING:
    from loadgen.run import RunDir
    from loadgen.secrets import Secrets
    from loadgen.sweep import SweepState

SWEEP = "Sweep"

SWEEP_HELP = """Run a series of load points against one server and tabulate them.

One complete run per point in DIR/points/<point>/, plus DIR/sweep.json, DIR/sweep.csv, DIR/sweep.html
(plots: latency against throughput, attainment and goodput against the load; --no-html: none) and a
table of throughput, latency percentiles, SLO attainment, goodput and errors per point.

Every `goodput run` option (and --config) applies to each point; --rates, --concurrencies or --auto
picks the points, --point-duration / --point-requests their length. Each point leaves its first 10 %
out of the measurement (warm-up) unless --warmup is given. With no --url, the bundled reference server
is started once for the whole sweep. Ctrl-C keeps the finished points and names the missing ones;
`goodput sweep --resume DIR` runs them.

Exit codes: 0 every point ran; 1 a point could not run or had a runtime error; 99 a point failed its
thresholds; 130 interrupted; 2 a usage error (nothing sent).

\b
Examples:
  goodput sweep --url http://127.0.0.1:8000 --rates 1,2,4,8 \\
      --point-duration 30s --slo ttft=500ms --slo tpot=50ms
  goodput sweep --url http://127.0.0.1:8000 --concurrencies 1,4,16,64 \\
      --point-requests 200
  goodput sweep --url http://127.0.0.1:8000 --auto --points 10 \\
      --point-duration 1m --output runs/sweep
  goodput sweep --config loadtest.yaml --rates 2,4,6 --output runs/sweep
  # finish a sweep that was interrupted
  goodput sweep --resume runs/sweep
"""


def _sweep_options(
    rates: Annotated[str | None, typer.Option(help="Open-loop points: requests/s, comma-separated (e.g. 1,2,4,8), with the run's --arrival (poisson unless constant or gamma).", rich_help_panel=SWEEP)] = None,
    concurrencies: Annotated[str | None, typer.Option(help="Closed-loop points: requests kept in flight, comma-separated (e.g. 1,4,16,64).", rich_help_panel=SWEEP)] = None,
    auto: Annotated[bool, typer.Option("--auto", help="Measure the throughput ceiling first (closed loop at --concurrency, default 256), then --points rates from light load to 1.1 x the ceiling.", rich_help_panel=SWEEP)] = False,
    points: Annotated[int, typer.Option(help="--auto: how many open-loop rates.", rich_help_panel=SWEEP)] = 8,
    point_duration: Annotated[str | None, typer.Option(help="Length of each point (e.g. 30s, 2m); default: --duration / --requests, else 100 requests.", rich_help_panel=SWEEP)] = None,
    point_requests: Annotated[int | None, typer.Option(help="Requests per point (with --point-duration: whichever ends first).", rich_help_panel=SWEEP)] = None,
    resume: Annotated[Path | None, typer.Option(help="Finish the interrupted sweep in this directory, as it was planned (only credentials, --quiet and --no-html may be given again).", rich_help_panel=SWEEP)] = None,
    html: Annotated[bool, typer.Option("--html/--no-html", help="Write DIR/sweep.html (latency against throughput, attainment and goodput against the load, the points; one self-contained file) at the end, and each point's report.html.", rich_help_panel=OUTPUTS)] = True,
) -> None:
    """The sweep's own options (their signature is what Typer reads)."""


@dataclass(frozen=True, slots=True)
class SweepOptions:
    """The sweep's own options (and --config) as Typer parsed them (their types: `_sweep_options`)."""

    config: Path | None
    rates: str | None
    concurrencies: str | None
    auto: bool
    points: int
    point_duration: str | None
    point_requests: int | None
    resume: Path | None


def sweep(ctx: typer.Context, **options: Any) -> int:
    from loadgen.sweep import run_sweep

    own = SweepOptions(config=options["config"], rates=options["rates"], concurrencies=options["concurrencies"],
                       auto=options["auto"], points=options["points"], point_duration=options["point_duration"],
                       point_requests=options["point_requests"], resume=options["resume"])
    try:
        if own.resume is not None:
            state, secrets, run_dir = _resume(ctx, own.resume)
        else:
            state, secrets, run_dir = _new(ctx, own)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    code = run_sweep(state, secrets, run_dir, quiet=state.spec.outputs.quiet)
    if code:
        raise typer.Exit(code)
    return 0


def _new(ctx: typer.Context, options: SweepOptions) -> tuple[SweepState, Secrets, RunDir]:
    from loadgen.spec import build_spec
    from loadgen.sweep import (
        DEFAULT_CEILING_CONCURRENCY,
        SweepState,
        parse_list,
        plan_sweep,
        point_length,
        prepare_sweep_dir,
        sweep_mode,
    )
    from loadgen.workload import parse_duration_flag

    values, explicit = run_spec_values(ctx, options.config)
    spec, secrets = build_spec(values)
    duration = options.point_duration
    length = point_length(spec, explicit, requests=options.point_requests, default_duration_s=None,
                          duration_s=parse_duration_flag(duration, "--point-duration") if duration else None)
    mode = sweep_mode(
        rates=parse_list(options.rates, "--rates", whole=False) if options.rates else None,
        concurrencies=parse_list(options.concurrencies, "--concurrencies", whole=True) if options.concurrencies else None,
        auto_points=options.points if options.auto else None,
        ceiling_concurrency=values.concurrency if "concurrency" in explicit and values.concurrency else DEFAULT_CEILING_CONCURRENCY)
    state = SweepState(spec=spec, mode=mode, length=length, points=plan_sweep(mode, length, seed=spec.load.seed))
    check_points(state, secrets)
    output = spec.outputs.output
    run_dir = prepare_sweep_dir(Path(output) if output is not None else None, kind="sweep", overwrite=spec.outputs.overwrite)
    return state, secrets, run_dir


def check_points(state: SweepState, secrets: Secrets) -> None:
    """Everything a point needs that can be wrong (dataset, tokenizer, thresholds, baseline, schedule) is
    checked on the first planned point and on a rate point before anything is sent (ValueError)."""
    from loadgen.run import plan_run
    from loadgen.sweep import plan_point, point_gate, point_spec
    from metrics.results import POINTS_DIR

    probe_dir = Path(POINTS_DIR) / "check"
    samples = [state.points[0]]
    if state.points[0].kind != "rate":
        samples.append(plan_point(1, "rate", 1.0, state.length, seed=state.spec.load.seed))
    for point in samples:
        # The point's own --junit / --markdown files go into its directory, under the sweep's (checked).
        gate = replace(point_gate(state.spec, probe_dir), junit=None, markdown=None) if state.spec.gate.enabled else None
        plan_run(point_spec(state.spec, point, run_dir=probe_dir, server_url="http://127.0.0.1:9", gate=gate), secrets)


def _set_by_user(ctx: typer.Context, name: str) -> bool:
    source = ctx.get_parameter_source(name)
    return source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT")


_RESUME_ALLOWED = frozenset({"api_key", "header", "pushgateway_password", "url", "quiet", "html"})
_OWN = ("rates", "concurrencies", "auto", "points", "point_duration", "point_requests", "config")


def _resume(ctx: typer.Context, directory: Path) -> tuple[SweepState, Secrets, RunDir]:
    """The sweep sweep.json describes, with credentials (never stored) from the command line or
    environment again, and --quiet / --no-html; any other option is refused: a resumed sweep runs as it was
    planned."""
    from loadgen.cli.run import given_values
    from loadgen.run import RunDir
    from loadgen.spec import build_spec, spec_values, text_items
    from loadgen.sweep import read_sweep

    given = given_values(ctx)
    own = [name for name in _OWN if _set_by_user(ctx, name)]
    refused = sorted(set(given) - _RESUME_ALLOWED) + own
    if refused:
        flags = ", ".join("--" + name.replace("_", "-") for name in refused)
        raise ValueError(f"--resume finishes the sweep as it was planned; it takes no other options than "
                         f"credentials (--api-key, --header, --pushgateway-password, --url), --quiet and --no-html; drop {flags}")
    state = read_sweep(directory)
    values = spec_values(state.spec)
    for name in _RESUME_ALLOWED & set(given):
        values[name] = given[name]
    if "header" in given:
        values["header"] = [*(f"{k}: {v}" for k, v in state.spec.request.headers), *text_items(given["header"])]
    spec, secrets = build_spec(values)
    if replace(spec, outputs=state.spec.outputs) != state.spec:
        raise ValueError("--resume: the credentials given change the sweep's target or headers; give only the "
                         "values of the secret headers and the URL it was planned with")
    state.spec = replace(state.spec, outputs=replace(state.spec.outputs, quiet=spec.outputs.quiet, html=spec.outputs.html))
    if not state.missing():
        raise ValueError(f"--resume {directory}: the sweep is complete; nothing to run")
    from loadgen.sweep import point_gate
    from metrics.results import point_path

    for point in state.pending():  # every directory it would write, checked before anything is sent
        point_dir = point_path(directory, point.label)
        if state.spec.gate.enabled:
            point_gate(state.spec, point_dir)
    return state, secrets, RunDir(directory, None)


# --html/--no-html is the sweep's own (its help says what a sweep writes); it sets the run option of that name.
with_run_options(sweep, _sweep_options, drop=frozenset({"print_config", "html"}))
