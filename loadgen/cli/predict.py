"""`goodput predict`: latency, attainment and capacity of a workload on a calibrated server model, in
virtual time (loadgen.predict). Every `goodput run` workload and load option applies; nothing is sent."""

from __future__ import annotations

import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from loadgen.cli.cost_options import COST, GPU_HOUR_COST_HELP, GPUS_PER_REPLICA_HELP, TARGET_RATE_HELP
from loadgen.cli.predict_options import config_not_used, json_path, refuse_unused, restrict_run_options
from loadgen.cli.run_params import run_parameters, run_spec_values, with_run_options
from metrics.results import CostJson, PredictedBand, PredictedCapacity, PredictView

PREDICT = "Prediction"

PREDICT_HELP = """Predict latency, SLO attainment and capacity from a calibrated server model.

The reference engine's own scheduler, KV block manager and prefix cache run the workload's arrival
schedule in virtual time, each engine step lasting what the server model (goodput calibrate) says.
No request is sent. Workload and load options are those of goodput run (synthetic lengths, datasets,
traces; open-loop arrivals); its options about the target, requests, timeouts, Prometheus, workers,
gates and run outputs do not apply and are refused. Prints one row per rate and writes predict.json
and predict.html (--output DIR: into DIR; else --json's path, the page beside it): charts of every
predicted figure against the rate, with the points of --measured runs, sweeps or capacity searches
overlaid and their error. Each rate is one run of --requests or --duration,
or one point of goodput capacity with --point-duration (its send times and
warm-up): past the rate a server sustains the queue grows with the window, so
predict a capacity search with its own --point-duration.

\b
Examples:
  goodput predict --server-model server-model.json --rates 2,4,8 \\
      --prompt-tokens 1024 --output-tokens 256 --requests 2000
  goodput predict --server-model server-model.json --capacity \\
      --slo ttft=500ms --slo tpot=50ms --attainment 0.9 \\
      --trace mooncake.jsonl --requests 5000
  goodput predict --server-model server-model.json --capacity \\
      --slo ttft=1s --replicas 4 --routing least-loaded
  goodput predict --server-model server-model.json --capacity \\
      --slo ttft=1s --gpu-hour-cost 2.5 --target-rate 40
  goodput predict --server-model server-model.json --capacity \\
      --slo ttft=1s --prompt-tokens 1024 --output-tokens 32 \\
      --point-duration 30s --measured runs/cap --output out
"""


def _predict_options(
    server_model: Annotated[Path, typer.Option(help="server-model.json written by goodput calibrate.", rich_help_panel=PREDICT)],
    rates: Annotated[str | None, typer.Option(help="Comma-separated request rates to predict, req/s.", rich_help_panel=PREDICT)] = None,
    capacity: Annotated[bool, typer.Option("--capacity", help="Predict the highest rate meeting --attainment of the --slo, with a band from the fit's standard errors.", rich_help_panel=PREDICT)] = False,
    attainment: Annotated[str, typer.Option(help="Target SLO attainment for --capacity (0.9 or 90%).", rich_help_panel=PREDICT)] = "0.9",
    replicas: Annotated[int, typer.Option(help="Replicas behind a router; --rates and the capacity are their total.", rich_help_panel=PREDICT)] = 1,
    routing: Annotated[str, typer.Option(help="How the router picks a replica: round-robin or least-loaded (fewest unfinished requests).", rich_help_panel=PREDICT)] = "round-robin",
    json_path: Annotated[Path, typer.Option("--json", help="Where to write the prediction; its HTML page goes beside it (predict.json: predict.html; --no-html: none).", rich_help_panel=PREDICT)] = Path("predict.json"),
    measured: Annotated[list[Path] | None, typer.Option("--measured", metavar="DIR", help="A run, sweep or capacity directory to hold the prediction against (repeatable): its points are predicted at their own rates too, and the page overlays them, with the error per rate and of the capacity.", rich_help_panel=PREDICT)] = None,
    gpu_hour_cost: Annotated[float | None, typer.Option(help=GPU_HOUR_COST_HELP + " At the predicted capacity (--capacity).", rich_help_panel=COST)] = None,
    gpus_per_replica: Annotated[int | None, typer.Option(help=GPUS_PER_REPLICA_HELP, rich_help_panel=COST)] = None,
    target_rate: Annotated[float | None, typer.Option(help=TARGET_RATE_HELP, rich_help_panel=COST)] = None,
    point_duration: Annotated[str | None, typer.Option(help="Predict each rate as one point of goodput capacity or sweep with this --point-duration sends it: send times that realise the rate exactly, the first 10 % (the point's warm-up) run but left out of the figures. Instead of --duration / --requests.", rich_help_panel=PREDICT)] = None,
    jobs: Annotated[int | None, typer.Option(help="Processes predicting the rates side by side (default: one per CPU this process may use; 1: one rate after another in this process). The predictions are the same.", rich_help_panel=PREDICT)] = None,
) -> None:
    """The command's own options (their signature is what Typer reads)."""


def _rates(text: str) -> list[float]:
    try:
        rates = [float(r) for r in text.split(",") if r.strip()]
    except ValueError:
        raise ValueError(f"--rates expects numbers separated by commas, got {text!r}") from None
    if not rates or any(not (r > 0 and math.isfinite(r)) for r in rates):
        raise ValueError(f"--rates needs finite positive rates, got {text!r}")
    return rates


def predict(ctx: typer.Context, **options: Any) -> int:
    from loadgen.cli.capacity import _fraction
    from loadgen.cli.cost_options import parse_cost_options
    from loadgen.predict import (
        Fleet,
        Requests,
        RequestSource,
        capacity_band,
        compare_measured,
        default_jobs,
        format_table,
        load_model,
        measured_lines,
        measured_rates,
        monotone_note,
        points_at,
        prediction_context,
        read_measured,
        slo_given,
    )
    from loadgen.spec import build_spec
    from loadgen.sweep import plan_point, point_length
    from loadgen.workload import parse_duration_flag
    from metrics import SLO
    from metrics.model import cost_lines

    try:
        refuse_unused(ctx, RUN_NAMES)
        out_path = json_path(ctx, output=options["output"], path=options["json_path"])
        model = load_model(options["server_model"])
        values, explicit = run_spec_values(ctx, options["config"])
        unused = config_not_used(ctx, explicit)
        if unused:
            where = "; --output or --json place predict.json" if "output" in unused else ""
            print(f"goodput predict: note: the config file's {', '.join(unused)} "
                  f"{'is' if len(unused) == 1 else 'are'} not used by a prediction (nothing is sent{where})",
                  file=sys.stderr)
        spec, _ = build_spec(values)
        slo = None if spec.metrics.slo == SLO() else spec.metrics.slo
        rates = _rates(options["rates"]) if options["rates"] else []
        asked = set(rates)  # the --rates points (the others are --measured ones)
        measured = [read_measured(path) for path in options["measured"] or []]
        if measured:  # every measured point is predicted at its own rate
            rates = sorted(set(rates) | set(measured_rates(measured)))
        if not rates and not options["capacity"]:
            raise ValueError("give --rates r1,r2,... or --capacity")
        if options["capacity"] and slo is None:
            raise ValueError("--capacity needs an SLO (--slo ttft=500ms --slo tpot=50ms)")
        target = _fraction(options["attainment"], "--attainment")
        if options["replicas"] < 1:
            raise ValueError(f"--replicas must be >= 1, got {options['replicas']}")
        if options["routing"] not in ("round-robin", "least-loaded"):
            raise ValueError(f"--routing must be round-robin or least-loaded, got {options['routing']!r}")
        fleet = Fleet(options["replicas"], options["routing"])
        costs = parse_cost_options(options["gpu_hour_cost"], options["gpus_per_replica"], options["target_rate"])
        if costs is not None and not options["capacity"]:
            raise ValueError("--gpu-hour-cost prices the predicted capacity: add --capacity")

        jobs = default_jobs() if options["jobs"] is None else options["jobs"]
        if jobs < 1:
            raise ValueError(f"--jobs must be >= 1, got {jobs}")
        point = None
        if options["point_duration"] is not None:
            if explicit & {"duration", "requests"}:
                raise ValueError("--point-duration sets each rate's length: leave out --duration and --requests")
            point = point_length(spec, explicit, requests=None, default_duration_s=None,
                                 duration_s=parse_duration_flag(options["point_duration"], "--point-duration"))
            plan = plan_point(0, "rate", spec.load.arrival.rate or 1.0, point, seed=spec.load.seed)
            # predict.json's load says what every rate ran: the point's length and warm-up
            spec = replace(spec, load=replace(spec.load, duration_s=plan.duration_s, requests=plan.requests,
                                              warmup_s=plan.warmup_s))
        source = RequestSource(spec)
        source.warm(rates, point)  # built once, before the rates' processes fork

        def requests_at(rate: float) -> Requests:
            return source.at(rate, point)

        # A bad workload, or a request the model's KV pool cannot hold, is a usage error (ValueError).
        points = points_at(model, rates, requests_at, slo, fleet, jobs)
        band = capacity_band(model, requests_at, slo, target, start=spec.load.arrival.rate or 1.0, fleet=fleet) \
            if options["capacity"] and slo is not None else None
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    if points:
        typer.echo(format_table(points))
    spec_json, workload, model_info = prediction_context(spec, model, options["server_model"])
    capacity = cost = None
    if band is not None:
        probed = list(band.probes)
        others = [(p.rate, p.attainment, "--rates" if p.rate in asked else "--measured") for p in points
                  if p.attainment is not None]
        note = monotone_note(probed, target, others)
        capacity = PredictedCapacity(target, band, note)
        typer.echo(f"predicted capacity {band.rate:.3g} req/s at {target:.0%} attainment ({band_text(band, model)})")
        if note:
            typer.echo(f"note: {note}")
        if costs is not None:
            cost = predicted_cost(band.rate, fleet.replicas, source.at(band.rate, point).max_tokens, costs)
            for line in cost_lines(cost):
                typer.echo(line)
    predicted = tuple(p.view() for p in points)
    comparisons = None
    if measured:
        by_rate = {p.rate: p for p in predicted}
        given = slo_given(slo.to_dict()) if slo is not None else None
        comparisons = tuple(compare_measured(m, by_rate, spec=spec_json, slo=given, target=target,
                                             band=capacity.band if capacity is not None else None)
                            for m in measured)
        for line in measured_lines(comparisons):
            typer.echo(line)
    result = PredictView(server_model=str(options["server_model"]), slo=slo.to_dict() if slo else None,
                         replicas=fleet.replicas, routing=fleet.routing, points=predicted, spec=spec_json,
                         workload=workload, model=model_info, capacity=capacity, cost=cost, measured=comparisons)
    return write_prediction(result, out_path, html=options["html"])


def band_text(band: PredictedBand, model: Any) -> str:
    if not any(model.std_err.values()):
        return "no band: the server model holds no standard errors"
    return f"band {band.low:.3g}-{band.high:.3g} req/s from the fit's standard errors"


def write_prediction(result: PredictView, json_path: Path, *, html: bool) -> int:
    """predict.json, and its page beside it (same name, .html) unless --no-html; exit 1 when one cannot be
    written."""
    from exporters.html import write_predict_report
    from metrics.results import write_json

    try:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        write_json(json_path, result.to_json())  # atomic: a temporary file beside it, then a rename
        if html:
            page = json_path.with_name(json_path.name + ".html") if json_path.suffix == ".html" \
                else json_path.with_suffix(".html")
            typer.echo(f"HTML report: {write_predict_report(result, page)}")
    except OSError as exc:
        print(f"goodput predict: cannot write {exc.filename or json_path}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except ValueError as exc:  # a figure that is not finite: JSON has no such number
        print(f"goodput predict: cannot write {json_path}: {exc}", file=sys.stderr)
        return 1
    return 0


def predicted_cost(rate: float, replicas: int, max_tokens: list[int], costs: Any) -> CostJson:
    """The cost block at a predicted capacity of `rate` req/s over `replicas`: priced per replica (rate /
    replicas, the fleet's cost per request being one replica's at its share); each request's output is its
    max tokens, as the virtual engine runs every request to its max tokens."""
    from metrics.model import cost_block

    mean_output = sum(max_tokens) / len(max_tokens) if max_tokens else None
    return cost_block(rate / replicas, mean_output, gpu_hour_cost=costs.gpu_hour_cost,
                      gpus_per_replica=costs.gpus_per_replica, target_rps=costs.target_rate)


with_run_options(predict, _predict_options)
RUN_NAMES = {p.name for p in run_parameters(drop=frozenset({"print_config"}))} - {"ctx"}
restrict_run_options(predict, RUN_NAMES)
