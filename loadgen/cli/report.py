"""`goodput report DIR`: rebuild every output of a run from its `records.jsonl` (and `run.json` when
present), for a finished run, an interrupted one, or one killed with SIGKILL."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from exporters import format_summary
from loadgen.run import (
    add_gpu_section,
    add_server_section,
    build_outputs,
    load_server_section,
    rebuild_textfile,
)
from metrics import parse_slo
from metrics.records import InputReport
from metrics.results import (
    CAPACITY_FILE,
    POINTS_DIR,
    RECORDS_FILE,
    SWEEP_FILE,
    TEXTFILE,
    CapacityView,
    JsonObject,
    SweepView,
    json_object,
    read_capacity,
    read_run,
    read_sweep,
)

SHOWN_ON_CONSOLE = 3

REPORT_HELP = """Rebuild summary.json, summary.csv and records.parquet of a run directory from records.jsonl.

On a sweep or capacity directory (sweep.json / capacity.json), print its table of points; with --html
(re)write its sweep.html / capacity.html.

\b
Examples:
  goodput report runs/20261202-101500
  # re-judge goodput with other SLOs
  goodput report runs/c32 --slo ttft=300ms --slo tpot=40ms
  # also write runs/c32/report.html, or c32.html
  goodput report runs/c32 --html
  goodput report runs/c32 --html c32.html
  # a sweep: runs/sweep/sweep.html
  goodput report runs/sweep --html

metrics.prom is rebuilt when it is missing (a killed run), when --slo changes the SLOs, or with --textfile;
otherwise the one the run wrote from the same records stands. Server figures scraped during the run
(server_prometheus.json) are put back into summary.json.

Lines of records.jsonl that are not records (not JSON, not an object, a required field missing, a field of
the wrong type, a request id an earlier record has) are skipped, counted and listed in summary.json
"input", and reported on stderr; the rest is summarised. Exit 1 when any was skipped, unless
--allow-damaged. A last line cut short by a kill is left out and reported, and alone does not change
the exit code.

--html writes a self-contained HTML report with plots (it opens from disk with no network): the summary and
bucket tables, the SLO and the run's thresholds with pass/fail, latency CDFs, the run over time, the server
side and the roofline floors where known.
"""


def report(
    run_dir: Annotated[Path, typer.Argument(help="A run's output directory (holds records.jsonl), or a sweep's or capacity search's (sweep.json, capacity.json).")],
    html_path: Annotated[Path | None, typer.Argument(
        metavar="[PATH]", show_default=False, help="With --html: where to write the HTML report (default DIR/report.html; DIR/sweep.html or DIR/capacity.html for a sweep or a capacity search).")] = None,
    slo: Annotated[list[str] | None, typer.Option(help="Replace the run's SLOs: ttft=500ms, ttfo=2s, tpot=50ms, e2e=10s, itl_max=1s.")] = None,
    quiet: Annotated[bool, typer.Option(help="Write the files without printing the summary.")] = False,
    textfile: Annotated[bool | None, typer.Option("--textfile/--no-textfile", help="Rebuild metrics.prom (default: when it is missing, as after a kill, or when --slo changes the SLOs).")] = None,
    allow_damaged: Annotated[bool, typer.Option("--allow-damaged", help="Exit 0 even when lines of records.jsonl that are not records were skipped (they are still counted and listed).")] = False,
    html: Annotated[bool, typer.Option("--html", help="Also write the HTML report with plots: DIR/report.html, or the PATH given after --html.")] = False,
) -> int:
    if html_path is not None and not html:
        raise typer.BadParameter(f"unexpected argument {str(html_path)!r} (an HTML report's path goes after --html)")
    if html_path is not None and html_path.is_dir():
        raise typer.BadParameter(f"--html {html_path} is a directory; give a file path")
    records_path = run_dir / RECORDS_FILE
    if not records_path.is_file():
        kind = results_kind(run_dir)
        if kind is None:
            raise typer.BadParameter(f"no {RECORDS_FILE} in {run_dir} (nor a sweep.json or capacity.json)")
        return report_results(run_dir, kind, html=html, html_path=html_path, quiet=quiet,
                              run_only=[flag for flag, given in (("--slo", slo), ("--textfile/--no-textfile",
                                        textfile is not None), ("--allow-damaged", allow_damaged)) if given])
    try:
        run = read_run(run_dir)
    except ValueError as exc:
        raise typer.BadParameter(f"unreadable run.json in {run_dir}: {exc}") from None
    from loadgen.dispatch import ended_by, read_status

    run.update(json_object(ended_by(run, read_status(run_dir))))  # a run.json never finished: what was kept
    given = run.get("settings")
    settings: JsonObject = dict(given) if isinstance(given, dict) else {}
    judged_with = None
    if slo:
        try:
            judged_with = parse_slo(slo)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
        settings["slo"] = list(slo)  # kept in the run's settings, as what it was re-judged with
    run = {**run, "settings": settings, "complete": bool(run.get("complete", False)), "rebuilt": True}
    try:
        built = build_outputs(run_dir, run, slo=judged_with)
        summary, read, ended = built.summary, built.input, built.run
        add_server_section(run_dir, summary, load_server_section(run_dir))
        add_gpu_section(run_dir, summary)
        if textfile or (textfile is None and (slo or not (run_dir / TEXTFILE).exists())):
            rebuild_textfile(run_dir, built.frame, run, built.gap_samples, slo=judged_with)
        report_path = None
        if html:  # imported here: `goodput report` without --html stays light
            from loadgen.run import write_run_report

            report_path = write_run_report(run_dir, path=html_path, frame=built.frame, gaps=built.gap_samples)
    except (OSError, RuntimeError) as exc:  # reading the records, writing an output, plotly not installed
        print(f"goodput report: error: {exc}", file=sys.stderr)
        return 1
    del built
    if not quiet:
        print(format_summary(summary))
    if report_path is not None and not quiet:
        print(f"HTML report: {report_path}")
    for line in input_lines(read, allow_damaged):
        print(line, file=sys.stderr)
    if ended.unwritten_records:
        print(f"goodput report: the run could not write {ended.unwritten_records} record(s) to {RECORDS_FILE}"
              f" ({ended.write_error or 'write error'}); they are not in this summary", file=sys.stderr)
    return 1 if read.skipped and not allow_damaged else 0


def results_kind(directory: Path) -> str | None:
    """`sweep` or `capacity` for a directory `goodput sweep` / `goodput capacity` wrote; None otherwise."""
    for kind, name in (("sweep", SWEEP_FILE), ("capacity", CAPACITY_FILE)):
        if (directory / name).is_file():
            return kind
    return None


def report_results(directory: Path, kind: str, *, html: bool, html_path: Path | None, quiet: bool,
                   run_only: list[str]) -> int:
    """`goodput report` on a sweep or capacity directory: print its table of points (unless --quiet) and, with
    --html, write its page (sweep.html / capacity.html, or PATH). Its points are runs of their own:
    `goodput report DIR/points/<point>` rebuilds one."""
    if run_only:
        raise typer.BadParameter(f"{', '.join(run_only)}: only for a run directory; {directory} is a {kind} "
                                 f"(give one of its points: {directory / POINTS_DIR / '<point>'})")
    from loadgen.sweep import capacity_line, points_table, write_capacity_html, write_sweep_html

    try:
        doc = read_results(directory, kind)
        page = None
        if html:
            page = write_capacity_html(directory, path=html_path) if kind == "capacity" else \
                write_sweep_html(directory, path=html_path)
    except ValueError as exc:  # a results file that is not one
        raise typer.BadParameter(str(exc)) from None
    except (OSError, RuntimeError) as exc:  # writing the page, plotly not installed
        print(f"goodput report: error: {exc}", file=sys.stderr)
        return 1
    if not quiet:
        print(points_table(doc.rows() if isinstance(doc, SweepView) else doc.points))
        if isinstance(doc, CapacityView):
            print(capacity_line(doc))
        if page is not None:
            print(f"HTML report: {page}")
    return 0


def read_results(directory: Path, kind: str) -> SweepView | CapacityView:
    """sweep.json or capacity.json, checked (ValueError, one line)."""
    if kind == "capacity":
        return read_capacity(directory)
    return read_sweep(directory, every_row=True)


def input_lines(read: InputReport, allow_damaged: bool) -> list[str]:
    """What the console says about lines of records.jsonl that were left out (nothing when none was)."""
    lines = []
    if read.skipped:
        shown = "; ".join(f"line {line}: {reason}" for line, reason in read.skipped[:SHOWN_ON_CONSOLE])
        more = len(read.skipped) - SHOWN_ON_CONSOLE
        listed = f"; {more} more in summary.json \"input\"" if more > 0 else ""
        outcome = "" if allow_damaged else "; exit 1 (--allow-damaged: 0)"
        lines.append(f"goodput report: {read.records_file}: {len(read.skipped)} of {read.lines} lines are not "
                     f"records and were skipped ({shown}{listed}); the other {read.records} records are "
                     f"summarised{outcome}")
    if read.torn_last_line is not None:
        lines.append(f"goodput report: {read.records_file}: last line {read.torn_last_line} is cut short "
                     "(the run was killed while writing it) and was left out")
    return lines
