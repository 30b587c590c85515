"""`goodput run` loads only what running needs: not the other commands' modules, not httpx's own command line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from loadgen.cli.commands import COMMANDS, build_app
from tests.loadgen._stream_server import paced_server

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


RUN_PROBE = """
import sys
import loadgen.dispatch.runner as runner
from loadgen.cli import main

loaded_at_dispatch = []
dispatch = runner.Runner.run

async def run(self):
    loaded_at_dispatch.extend(sys.modules)
    return await dispatch(self)

runner.Runner.run = run
sys.argv = ["goodput", "run", "--url", sys.argv[1], "--model", "m", "--rate", "50", "--requests", "3",
            "--output-tokens", "2", "--server-metrics", "none", "--no-html", "--quiet", "--output", sys.argv[2]]
try:
    main()
except SystemExit as exc:
    code = exc.code
heavy = ("pyarrow", "pandas", "plotly", "metrics.records.frame_arrow", "loadgen.run.outputs", "loadgen.run.gate",
         "loadgen.run.conclusion", "exporters.console", "exporters.markdown", "exporters.junit",
         "metrics.results.summary_view", "metrics.results.summary_run", "metrics.results.summary_stats")
print(code, [m for m in heavy if m in loaded_at_dispatch], "pyarrow" in sys.modules, file=sys.stderr)
"""


def test_the_result_files_machinery_is_loaded_after_the_last_request(tmp_path: Path) -> None:
    """Start-up to the first request pays only for what sending needs: the result files' machinery (pyarrow,
    the summary's outputs and its typed view, the gate, the console) is imported once dispatching is over, and still writes them."""
    with paced_server(first_s=0.005, gap_s=0.002) as srv:
        done = subprocess.run([sys.executable, "-c", RUN_PROBE, srv.url, str(tmp_path / "run")],
                              capture_output=True, text=True, timeout=120)
    assert done.stderr.strip().splitlines()[-1] == "0 [] True", done.stderr
    assert (tmp_path / "run" / "summary.json").is_file() and (tmp_path / "run" / "records.parquet").is_file()
