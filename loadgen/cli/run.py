"""`goodput run`: every option (flags, environment, a config file) → one `RunSpec`, checked before anything
is sent (exit 2 with one line), then handed to `loadgen.run.session`."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from loadgen.spec import PARAMETERS, Option

if TYPE_CHECKING:
    from loadgen.spec import OptionValue

RUN_HELP = """Run a load test against an OpenAI-compatible streaming server and write its results.

With no --url, the bundled reference server is started on a free loopback port and stopped afterwards.
The output directory is checked before anything is sent: one that already holds a run is refused unless
--overwrite, and one that cannot be written is a usage error (exit 2).

\b
Examples:
  # the embedded reference server, Poisson arrivals at 5 req/s
  goodput run --requests 50 --rate 5
  goodput run --url http://127.0.0.1:8000 \\
      --model meta-llama/Llama-3.1-8B-Instruct \\
      --arrival gamma --rate 8 --burstiness 0.5 --duration 2m --warmup 15s \\
      --prompt-tokens lognormal:1000:0.6 --output-tokens 256 \\
      --slo ttft=500ms --slo tpot=50ms
  goodput run --url http://127.0.0.1:8000 --arrival concurrency \\
      --concurrency 32 --requests 500 --dataset sharegpt.json \\
      --output runs/c32
  goodput run --url http://127.0.0.1:8000 --rate 8 --duration 1m \\
      --threshold 'ttft:p(99)<800ms'
  # GPU utilisation, memory, power and joules per output token (DCGM exporter)
  goodput run --url http://127.0.0.1:8000 --rate 8 --duration 1m \\
      --scrape dcgm=http://127.0.0.1:9400/metrics
  goodput run --url http://127.0.0.1:8000 --trace mooncake.jsonl \\
      --time-scale 2 --trace-duration 10m
  goodput run --url http://127.0.0.1:8000 --turns uniform:2:8 \\
      --think-time exponential:5s --rate 0.5
  # all cores
  goodput run --url http://127.0.0.1:8000 --rate 400 --duration 2m \\
      --workers auto
  # a checked-in config file; flags win over it
  goodput run --config loadtest.yaml --rate 16
  # start a config file
  goodput run --url http://127.0.0.1:8000 --rate 8 \\
      --print-config > loadtest.yaml
"""


def run(ctx: typer.Context, **values: Any) -> int:
    """The parameters are `run_parameters()`: Typer reads them from `run.__signature__`."""
    config, print_config = values["config"], values["print_config"]
    # Imported here, not with the module: `goodput --help` stays light.
    from loadgen.run import execute, plan_run, prepare_run_dir
    from loadgen.spec import build_spec, merge_values, read_config_file

    try:
        file_values = read_config_file(config) if config is not None else {}
        spec, secrets = build_spec(merge_values(run_defaults(), file_values, given_values(ctx)))
        if print_config:
            from loadgen.spec import render_config

            typer.echo(render_config(spec), nl=False)
            return 0
        setup = plan_run(spec, secrets)
        # Last: the directory is created only once everything else is known to be valid, and `execute`
        # (which removes it again if nothing gets sent) takes it over at once.
        output_dir = spec.outputs.output
        run_dir = prepare_run_dir(Path(output_dir) if output_dir is not None else None,
                                  overwrite=spec.outputs.overwrite)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    code = execute(setup, run_dir)
    if code:
        raise typer.Exit(code)
    return 0


def _parameter(option: Option) -> inspect.Parameter:
    flag = typer.Option(*option.decls, envvar=option.envvar, help=option.help, show_default=option.show_default,
                        rich_help_panel=option.panel)
    return inspect.Parameter(option.param, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=option.default,
                             annotation=Annotated[option.type, flag])


def run_signature() -> inspect.Signature:
    """`goodput run`'s signature, made from the one declaration of each parameter (loadgen.spec.options)."""
    context = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)
    return inspect.Signature([context, *(_parameter(o) for o in PARAMETERS)], return_annotation=int)


run.__signature__ = run_signature()  # type: ignore[attr-defined]


def run_defaults() -> dict[str, OptionValue]:
    """Every run option at its default, as `goodput run` with no flags would have it."""
    from loadgen.spec import OPTIONS

    return {o.param: o.default for o in OPTIONS}


def given_values(ctx: typer.Context) -> dict[str, OptionValue]:
    """The options the user set on the command line or through their environment variable."""
    from loadgen.spec import BY_PARAM

    given: dict[str, OptionValue] = {}
    for name, value in ctx.params.items():
        source = ctx.get_parameter_source(name)
        if name in BY_PARAM and source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT"):
            given[name] = value
    return given
