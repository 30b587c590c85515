"""`goodput report DIR`: rebuild every output of a run from its `records.jsonl` (and `run.json` when
present), for a finished run, an interrupted one, or one killed with SIGKILL."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from exporters.console import format_summary
from exporters.textfile import TEXTFILE
from loadgen.outputs import RECORDS_FILE, build_outputs, read_run
from loadgen.prom_run import add_server_section, load_server_section, rebuild_textfile
from metrics.slo import parse_slo

REPORT_HELP = """Rebuild summary.json, summary.csv and records.parquet of a run directory from records.jsonl.

\b
Examples:
  goodput report runs/20261202-101500
  goodput report runs/c32 --slo ttft=300ms --slo tpot=40ms     # re-judge goodput with other SLOs

metrics.prom is rebuilt when it is missing (a killed run), when --slo changes the SLOs, or with --textfile;
otherwise the one the run wrote from the same records stands. Server figures scraped during the run
(server_prometheus.json) are put back into summary.json.
"""


def report(
    run_dir: Annotated[Path, typer.Argument(help="A run's output directory (holds records.jsonl).")],
    slo: Annotated[list[str] | None, typer.Option(help="Replace the run's SLOs: ttft=500ms, tpot=50ms, e2e=10s, itl_max=1s.")] = None,
    quiet: Annotated[bool, typer.Option(help="Write the files without printing the summary.")] = False,
    textfile: Annotated[bool | None, typer.Option("--textfile/--no-textfile", help="Rebuild metrics.prom (default: when it is missing, as after a kill, or when --slo changes the SLOs).")] = None,
) -> int:
    records_path = run_dir / RECORDS_FILE
    if not records_path.is_file():
        raise typer.BadParameter(f"no {RECORDS_FILE} in {run_dir}")
    try:
        run = read_run(run_dir)
    except ValueError as exc:
        raise typer.BadParameter(f"unreadable run.json in {run_dir}: {exc}") from None
    settings = dict(run.get("settings", {}))
    if slo:
        try:
            parse_slo(slo)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
        settings["slo"] = list(slo)
    run = {**run, "settings": settings, "complete": bool(run.get("complete", False)), "rebuilt": True}
    built = build_outputs(run_dir, run)
    summary = built.summary
    add_server_section(run_dir, summary, load_server_section(run_dir))
    if textfile or (textfile is None and (slo or not (run_dir / TEXTFILE).exists())):
        rebuild_textfile(run_dir, built.frame, run, built.gap_samples)
    del built
    if not quiet:
        print(format_summary(summary))
    return 0
