"""`goodput run` loads only what running needs: not the other commands' modules, not httpx's own command line."""

from __future__ import annotations

import subprocess
import sys

from loadgen.cli.commands import COMMANDS, build_app

PROBE = """
import sys
from loadgen.cli import keep_optional_modules_out, run_cli
keep_optional_modules_out()
code = run_cli(["run", "--url", "http://127.0.0.1:9", "--model", "m", "--rate", "5", "--print-config"])
loaded = [m for m in ("loadgen.cli.report", "loadgen.cli.sweep", "loadgen.cli.capacity", "loadgen.cli.trace",
                      "loadgen.cli.dashboards", "loadgen.cli.plan", "refserver.cli", "rich.syntax") if m in sys.modules]
print(code, loaded, sys.modules.get("httpx._main", "absent"), file=sys.stderr)
"""


def test_goodput_run_imports_no_other_command() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert done.stderr.strip().splitlines()[-1] == "0 [] None", done.stderr


def test_every_command_is_registered_when_none_is_named() -> None:
    app = build_app()
    names = {c.name for c in app.registered_commands} | {g.name for g in app.registered_groups}
    assert names == set(COMMANDS)


def test_one_named_command_is_still_a_subcommand() -> None:
    """A Typer app with a single command would otherwise run it without its name (`goodput --rate 5`)."""
    from typer.testing import CliRunner

    result = CliRunner().invoke(build_app(only="run"), ["run", "--help"], prog_name="goodput")
    assert result.exit_code == 0 and "Usage: goodput run" in result.output
