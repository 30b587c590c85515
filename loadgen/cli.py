"""The `goodput` command line. One module per command; this one assembles them and owns the exit codes:
0 ok, 1 runtime error, 2 usage error (one line on stderr, nothing sent), 99 thresholds failed,
130 interrupted (outputs still written, `complete: false`)."""

from __future__ import annotations

import sys
from typing import NoReturn

import typer

try:  # recent Typer vendors its own copy of Click; its exceptions are not click's
    from typer._click.exceptions import ClickException, UsageError
except ImportError:  # pragma: no cover - older Typer on top of Click
    from click import ClickException, UsageError  # type: ignore[assignment]

from loadgen.cli_dashboards import dashboards_app
from loadgen.cli_gate import COMPARE_HELP, GATE_HELP, compare, gate
from loadgen.cli_report import REPORT_HELP, report
from loadgen.cli_run import RUN_HELP, run

app = typer.Typer(
    name="goodput",
    help="Request-level metrics and load testing for LLM serving: exact TTFT / ITL / TPOT / E2E and goodput.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.command("run", help=RUN_HELP)(run)
app.command("report", help=REPORT_HELP)(report)
app.command("gate", help=GATE_HELP)(gate)
app.command("compare", help=COMPARE_HELP)(compare)
app.add_typer(dashboards_app, name="dashboards")


def _register_optional() -> None:
    """Commands whose modules may be absent in a partial install stay out of the way of the others."""
    try:
        from refserver.cli import serve
    except ImportError:
        pass
    else:
        app.command("serve")(serve)
    try:
        from loadgen.cli_plan import plan
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


def main() -> NoReturn:
    sys.exit(run_cli())
