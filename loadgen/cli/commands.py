"""The `goodput` commands, each imported only when it is the one being run.

Typer inspects the signature of every registered command (and Typer's option machinery is costly per
option) on every invocation, and importing every command module pulls in the whole package: for
`goodput run` that was a quarter of a second of start-up before the first request. `build_app(only=NAME)`
registers only that command; with no name (help, no arguments, an unknown command) every command is
registered, so `goodput --help` lists them all. Errors become exit codes in `run_app`: 0 ok, 1 runtime
error, 2 usage error (one line on stderr, nothing sent), 99 thresholds failed, 130 interrupted.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import typer

from loadgen.cli.help_text import fit_app_help

try:  # recent Typer vendors its own copy of Click; its exceptions are not click's
    from typer._click.exceptions import ClickException, UsageError
except ImportError:  # pragma: no cover - older Typer on top of Click
    from click import ClickException, UsageError  # type: ignore[assignment]

P = ParamSpec("P")
R = TypeVar("R")

APP_HELP = "Request-level metrics and load testing for LLM serving: exact TTFT / ITL / TPOT / E2E and goodput."


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


def _run(app: typer.Typer) -> None:
    from loadgen.cli.run import RUN_HELP, run

    app.command("run", help=RUN_HELP)(_interruptible(run))


def _report(app: typer.Typer) -> None:
    from loadgen.cli.report import REPORT_HELP, report

    app.command("report", help=REPORT_HELP)(_interruptible(report))


def _gate(app: typer.Typer) -> None:
    from loadgen.cli.gate import GATE_HELP, gate

    app.command("gate", help=GATE_HELP)(_interruptible(gate))


def _compare(app: typer.Typer) -> None:
    from loadgen.cli.gate import COMPARE_HELP, compare

    app.command("compare", help=COMPARE_HELP)(_interruptible(compare))


def _sweep(app: typer.Typer) -> None:
    from loadgen.cli.sweep import SWEEP_HELP, sweep

    app.command("sweep", help=SWEEP_HELP)(_interruptible(sweep))


def _capacity(app: typer.Typer) -> None:
    from loadgen.cli.capacity import CAPACITY_HELP, capacity

    app.command("capacity", help=CAPACITY_HELP)(_interruptible(capacity))


def _predict(app: typer.Typer) -> None:
    from loadgen.cli.predict import PREDICT_HELP, predict

    app.command("predict", help=PREDICT_HELP)(_interruptible(predict))


def _calibrate(app: typer.Typer) -> None:
    from loadgen.cli.calibrate import CALIBRATE_HELP, calibrate

    app.command("calibrate", help=CALIBRATE_HELP)(_interruptible(calibrate))


def _dashboards(app: typer.Typer) -> None:
    from loadgen.cli.dashboards import dashboards_app

    app.add_typer(dashboards_app, name="dashboards")


def _trace(app: typer.Typer) -> None:
    from loadgen.cli.trace import trace_app

    app.add_typer(trace_app, name="trace")


def _serve(app: typer.Typer) -> None:
    """Optional: absent in a partial install, it stays out of the way of the others."""
    try:
        from refserver import serve
    except ImportError:
        return
    app.command("serve")(serve)


def _plan(app: typer.Typer) -> None:
    try:
        from loadgen.cli.plan import plan
    except ImportError:
        return
    app.command("plan")(plan)


COMMANDS: dict[str, Callable[[typer.Typer], None]] = {
    "run": _run, "report": _report, "gate": _gate, "compare": _compare, "sweep": _sweep, "capacity": _capacity,
    "predict": _predict, "calibrate": _calibrate,
    "dashboards": _dashboards, "trace": _trace, "serve": _serve, "plan": _plan,
}


def build_app(only: str | None = None) -> typer.Typer:
    """The CLI with every command, or with only `only` (as a subcommand all the same)."""
    app = typer.Typer(name="goodput", help=APP_HELP, no_args_is_help=True, add_completion=False,
                      pretty_exceptions_enable=False, rich_markup_mode="rich")
    if only is None:
        for register in COMMANDS.values():
            register(app)
    else:
        COMMANDS[only](app)

        @app.callback()
        def _group() -> None:  # a Typer app with one command and no callback would run it without its name
            """goodput"""

    fit_app_help(app)  # help that reads at 80 columns
    return app


def run_app(app: typer.Typer, argv: list[str] | None) -> int:
    """Run `app` and return its exit code; usage errors become one line on stderr and code 2."""
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


def run_cli(argv: list[str] | None = None) -> int:
    """The CLI for `argv` (default: the process's arguments), with only the named command loaded."""
    args = sys.argv[1:] if argv is None else argv
    name = args[0] if args and args[0] in COMMANDS else None
    return run_app(build_app(only=name), argv)
