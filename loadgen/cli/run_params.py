"""Commands made of `goodput run`s (`goodput sweep`, `goodput capacity`) take every `goodput run` option.

They do not copy run's parameters: `with_run_options` gives a command the signature of `goodput run`
(its parameters with their annotations evaluated, as Typer reads them) followed by the command's own
options, declared as the parameters of a stub function. Typer builds the command line from that
signature, so an option added to `goodput run` appears in these commands too, with the same flag, help,
panel, environment variable and config-file key, and `run_spec_values` turns them into a run spec's
option values exactly as `goodput run` does.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from loadgen.spec import OptionValues


def run_parameters(*, drop: frozenset[str]) -> list[inspect.Parameter]:
    from loadgen.cli.run import run

    return [p for p in inspect.signature(run, eval_str=True).parameters.values() if p.name not in drop]


def with_run_options(command: Callable[..., int], own_options: Callable[..., None], *,
                     drop: frozenset[str] = frozenset({"print_config"})) -> Callable[..., int]:
    """Give `command` (`def command(ctx: typer.Context, **options)`) the parameters of `own_options` and
    of `goodput run` (less `drop`); returns `command`."""
    params = run_parameters(drop=drop)
    taken = {p.name for p in params}
    own = list(inspect.signature(own_options, eval_str=True).parameters.values())
    clash = [p.name for p in own if p.name in taken]
    if clash:
        raise TypeError(f"{command.__name__}: its own options {clash} clash with goodput run's")
    # The command's own options first (after the context): its help shows them before the run's panels.
    context = [p for p in params if p.name == "ctx"]
    rest = [p for p in params if p.name != "ctx"]
    command.__signature__ = inspect.Signature([*context, *own, *rest], return_annotation=int)  # type: ignore[attr-defined]
    return command


def run_spec_values(ctx: typer.Context, config: Path | None) -> tuple[OptionValues, set[str]]:
    """The run option values as `goodput run` merges them (defaults, the config file, then the command
    line and environment), checked, and the names of those the user set explicitly (file, flag or environment)."""
    from loadgen.cli.run import given_values, run_defaults
    from loadgen.spec import OptionValues, merge_values, read_config_file

    file_values = read_config_file(config) if config is not None else {}
    given = given_values(ctx)
    return OptionValues.parse(merge_values(run_defaults(), file_values, given)), set(file_values) | set(given)
