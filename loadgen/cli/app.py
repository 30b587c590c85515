"""The `goodput` command line. One module per command; this one assembles them and turns what they raise
into exit codes: 0 ok, 1 runtime error, 2 usage error (one line on stderr, nothing sent), 99 thresholds
failed, 130 interrupted (outputs still written, `complete: false`). The console entry point is
`loadgen.cli.main`, which handles signals before this module is even imported."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import typer

try:  # recent Typer vendors its own copy of Click; its exceptions are not click's
    from typer._click.exceptions import ClickException, UsageError
except ImportError:  # pragma: no cover - older Typer on top of Click
    from click import ClickException, UsageError  # type: ignore[assignment]

from loadgen.cli.capacity import CAPACITY_HELP, capacity
from loadgen.cli.dashboards import dashboards_app
from loadgen.cli.gate import COMPARE_HELP, GATE_HELP, compare, gate
from loadgen.cli.report import REPORT_HELP, report
from loadgen.cli.run import RUN_HELP, run
from loadgen.cli.sweep import SWEEP_HELP, sweep
from loadgen.cli.trace import trace_app

P = ParamSpec("P")
R = TypeVar("R")

app = typer.Typer(
    name="goodput",
    help="Request-level metrics and load testing for LLM serving: exact TTFT / ITL / TPOT / E2E and goodput.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


def _interruptible(command: Callable[P, R]) -> Callable[P, R]:
    """Typer turns a KeyboardInterrupt (SIGINT, or SIGTERM via loadgen.cli) inside a command into a silent
    exit 130; this says so in one line first."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except KeyboardInterrupt:
            print("goodput: interrupted", file=sys.stderr)
            raise typer.Exit(130) from None

    return wrapper


app.command("run", help=RUN_HELP)(_interruptible(run))
app.command("report", help=REPORT_HELP)(_interruptible(report))
app.command("gate", help=GATE_HELP)(_interruptible(gate))
app.command("compare", help=COMPARE_HELP)(_interruptible(compare))
app.command("sweep", help=SWEEP_HELP)(_interruptible(sweep))
app.command("capacity", help=CAPACITY_HELP)(_interruptible(capacity))
app.add_typer(dashboards_app, name="dashboards")
app.add_typer(trace_app, name="trace")


def _register_optional() -> None:
    """Commands whose modules may be absent in a partial install stay out of the way of the others."""
    try:
        from refserver.cli import serve
    except ImportError:
        pass
    else:
        app.command("serve")(serve)
    try:
        from loadgen.cli.plan import plan
    except ImportError:
        pass
    else:
        app.command("plan")(plan)


_register_optional()


def run_cli(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code; usage errors become one line on stderr and code 2."""
    try:
        result = app(args=argv, standalone_mode=False, prog_name="goodput")
    except UsageError as exc:
        where = f"{exc.ctx.command_path}: " if exc.ctx is not None else "goodput: "
        print(f"{where}error: {exc.format_message()}", file=sys.stderr)
        return 2
    except typer.Abort:
        print("goodput: interrupted", file=sys.stderr)
        return 130
    except ClickException as exc:
        print(f"goodput: error: {exc.format_message()}", file=sys.stderr)
        return exc.exit_code
    return result if isinstance(result, int) else 0
