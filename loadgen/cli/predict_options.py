"""Which of `goodput run`'s options `goodput predict` takes (it inherits them all, loadgen.cli.run_params).

A prediction builds the run's requests and arrival schedule and sends nothing, so only the workload and
load options, the SLO, the config file and the outputs apply. The others (target, request and timeout
options, Prometheus, workers, gates, the run's metrics and output options) are hidden from its --help and
refused when given on the command line: one line naming them, exit 2. Set in the environment (an API key,
GOODPUT_URL) they are not used, as a prediction has nothing to send; a config file's are noted.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, get_args, get_origin

import typer

USED = frozenset({
    "arrival", "rate", "rate_end", "burstiness", "concurrency", "duration", "requests", "seed",
    "dataset", "dataset_format", "prompt_tokens", "output_tokens", "prefix_groups", "prefix_tokens",
    "prefix_weights", "tokenizer", "turns", "trace", "trace_format", "cache_bust", "time_scale",
    "trace_start", "trace_duration", "slo", "config", "output", "html",
})  # concurrency and turns are refused by the predictor with their own reason (loadgen.predict.requests)

OWN_HELP = {
    "output": "Directory to write predict.json and predict.html into (instead of --json's path).",
    "html": "Write predict.html (plots and tables, one self-contained file) beside predict.json.",
}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def restrict_run_options(command: Callable[..., int], run_names: set[str]) -> None:
    """Hide the run options a prediction does not use from `command`'s --help, and give the ones it uses
    differently their own help (Typer reads the annotations of the signature with_run_options set)."""
    sig = inspect.signature(command)
    params = []
    for p in sig.parameters.values():
        if p.name in run_names and get_origin(p.annotation) is Annotated:
            kind, info = get_args(p.annotation)
            info = copy.copy(info)
            if p.name not in USED:
                info.hidden = True
            elif p.name in OWN_HELP:
                info.help = OWN_HELP[p.name]
            p = p.replace(annotation=Annotated[kind, info])
        params.append(p)
    command.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]


def _given_on_command_line(ctx: typer.Context, name: str) -> bool:
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "COMMANDLINE"


def refuse_unused(ctx: typer.Context, run_names: set[str]) -> None:
    """ValueError naming every run option given on the command line that a prediction does not use."""
    refused = [_flag(n) for n in sorted(run_names - USED) if _given_on_command_line(ctx, n)]
    if refused:
        raise ValueError(f"a prediction sends nothing: drop {', '.join(refused)} (goodput run's options about "
                         "the target, requests, timeouts, Prometheus, workers, gates and run outputs do not apply)")


def config_not_used(ctx: typer.Context, explicit: set[str]) -> list[str]:
    """The config file's keys a prediction does not use (explicit names set neither on the command line nor
    in the environment); its `output` is the run's directory, and predict.json goes by --output or --json."""
    def from_file(name: str) -> bool:
        source = ctx.get_parameter_source(name)
        return source is None or source.name not in ("COMMANDLINE", "ENVIRONMENT")

    return sorted(n for n in explicit - (USED - {"output"}) if from_file(n))  # a run's directory: not predict's


def json_path(ctx: typer.Context, *, output: Path | None, path: Path) -> Path:
    """Where predict.json goes: DIR/predict.json with --output DIR (`output`), else --json's `path` (default
    predict.json); ValueError when both are given."""
    if not _given_on_command_line(ctx, "output"):
        output = None
    if output is None:
        return path
    if _given_on_command_line(ctx, "json_path"):
        raise ValueError("give --output DIR (DIR/predict.json and DIR/predict.html) or --json PATH, not both")
    if output.exists() and not output.is_dir():
        raise ValueError(f"--output {output}: not a directory")
    return output / "predict.json"
