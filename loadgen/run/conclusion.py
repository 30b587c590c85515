"""After the last request of a run: run.json completed, the result files, the console, the gate, the exit code.

Exit codes, when several apply the first of: 130 interrupted; the gate's code (99 thresholds failed);
1 a runtime error (records could not be written, dispatching stopped on a failure such as a lost worker
or the first requests all failing alike, no request in the measurement window succeeded, more requests
failed than --max-failed allows, or an output could not be written); 0. Each runtime error is one line
on stderr.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from exporters import failed_alike, format_summary
from loadgen.dispatch import RunState
from loadgen.run.cancel_release import with_cancel_release
from loadgen.run.failing import FailingAlike, too_many_failed
from loadgen.run.gate import abort_fields, finish_run_gate
from loadgen.run.gpu_scrape import add_gpu_section
from loadgen.run.outcome import EXIT_INTERRUPTED, EXIT_RUNTIME_ERROR, RunSoFar, describe_os_error
from loadgen.run.outputs import RECORDS_FILE, RUN_FILE, Outputs, build_outputs, run_summary_config
from loadgen.run.prometheus import add_server_section
from loadgen.run.setup import RunSetup
from metrics.results import RunEnd, write_run_file

if TYPE_CHECKING:
    from metrics.results import JsonObject, Requests


def conclude(setup: RunSetup, out: Path, run: RunSoFar, state: RunState, *, console: bool = True) -> int:
    """After the last request: run.json, the result files, the console, the gate, the exit code."""
    writer = run.writer
    assert writer is not None
    aborted = abort_fields(setup.gate)
    end = RunEnd(start_unix_s=state.start_unix_s, complete=not state.interrupted, interrupted=state.interrupted,
                 unwritten_records=writer.unwritten, aborted=aborted["aborted"],
                 abort_reason=aborted.get("abort_reason"),
                 write_error=describe_os_error(writer.error) if writer.error is not None else None,
                 stopped_early=str(state.failure) if isinstance(state.failure, FailingAlike) else None)
    ran = run.info()
    if end.aborted or writer.error is not None or state.failure is not None or ran.workers_lost:
        # stopped early, or a lost worker's requests: the planned load was not all sent
        end = end._replace(complete=False)
    run.run_info = ran.ended(end)
    info = run.run_info.to_json()
    try:
        write_run_file(out, run.run_info)
    except OSError as exc:  # the run.json written at the start stays
        run.output_errors.append(exc)
    summary = None
    built = None
    try:
        built = build_outputs(out, info)
        summary = built.summary
        add_server_section(out, summary, with_cancel_release(run.server_prom, out, built.frame, built.run,
                                                                  console=console))
        add_gpu_section(out, summary)
    except OSError as exc:
        run.output_errors.append(exc)
        if summary is None:
            summary = _summary_in_memory(out, info)
    if built is not None and summary is not None and setup.spec.outputs.html:
        _write_html(setup, out, built, run)
    del built
    if summary is not None and console:
        print(format_summary(summary))  # its server section includes the scraped /metrics figures
    if console:
        print(f"results: {out}")
    gate_code = 0
    if summary is not None:
        try:
            gate_code = finish_run_gate(setup.gate, out, summary)
        except OSError as exc:  # the JUnit or Markdown file
            run.output_errors.append(exc)
    errors = _error_lines(setup, out, run, state, summary)
    for line in errors:
        print(line, file=sys.stderr)
    if state.interrupted:
        return EXIT_INTERRUPTED
    if gate_code:
        return gate_code
    return EXIT_RUNTIME_ERROR if errors else 0


def _write_html(setup: RunSetup, out: Path, built: Outputs, run: RunSoFar) -> None:
    """report.html from what the summary was just built from; a failure to write it is an output error,
    a missing plotting library a warning."""
    from loadgen.run.html_report import write_run_report

    try:
        write_run_report(out, frame=built.frame, gaps=built.gap_samples, load_baseline=False,
                         baseline=setup.gate.baseline if setup.gate is not None else None)
    except OSError as exc:
        run.output_errors.append(exc)
    except (RuntimeError, ValueError) as exc:
        print(f"goodput: warning: report.html not written: {exc}", file=sys.stderr)


def _summary_in_memory(out: Path, info: JsonObject) -> JsonObject | None:
    """The summary of what records.jsonl holds, for the console when the result files cannot be written
    (disk full): the same figures `goodput report` gives once there is space again."""
    from metrics.records import frame_from_jsonl
    from metrics.results import RunDocument
    from metrics.summary import summarize_frame

    try:
        config = run_summary_config(RunDocument.from_json(info))
        return summarize_frame(frame_from_jsonl(out / RECORDS_FILE), config, dict(info))[0]
    except (OSError, ValueError):
        return None


def _error_lines(setup: RunSetup, out: Path, run: RunSoFar, state: RunState,
                 summary: JsonObject | None) -> list[str]:
    """One line per runtime error of a finished run (each makes the exit code 1)."""
    writer = run.writer
    assert writer is not None
    lines = []
    if writer.error is not None:
        if writer.unwritten:
            counted = " (records.status.json: unwritten_records)" if _failed_to_write(run, out / RUN_FILE) \
                else " (run.json: unwritten_records)"
            lost = f"{writer.unwritten} could not be written{counted}"
        else:
            lost = "the others were written once space came back"
        lines.append(f"goodput: error: cannot write {describe_os_error(writer.error)}; dispatching stopped after "
                     f"{state.sent} requests; records.jsonl holds {writer.written} of them, {lost}")
    elif isinstance(state.failure, FailingAlike):
        lines.append(f"goodput: error: {state.failure}")
    elif state.failure is not None:
        lines.append(f"goodput: error: dispatching stopped: {state.failure}")
    if run.output_errors:
        from loadgen.run.output_files import failed_names

        reason = run.output_errors[0].strerror or str(run.output_errors[0])
        lines.append(f"goodput: error: could not write {failed_names(run.output_errors, out)} (results in {out}; "
                     f"{reason}); `goodput report {out}` rebuilds the summaries from records.jsonl")
    if summary is not None and not state.interrupted and not isinstance(state.failure, FailingAlike):
        from metrics.results import Requests  # the summary's view: imported once the run is over

        requests = Requests.from_json(summary.get("requests"))
        line = _nothing_succeeded(requests) or too_many_failed(requests, setup.spec.load.max_failed)
        if line is not None:
            lines.append(line)
    return lines


def _failed_to_write(run: RunSoFar, path: Path) -> bool:
    return any(exc.filename == str(path) for exc in run.output_errors)


def _nothing_succeeded(requests: Requests) -> str | None:
    """The line for a run in which no request of the measurement window succeeded, else None."""
    measured, ok = requests.in_window, requests.in_window_ok
    if ok:
        return None
    if not measured:
        return "goodput: error: no request fell in the measurement window (check --warmup and --cooldown)"
    alike = failed_alike(requests)
    if alike is not None:
        return f"goodput: error: {alike}"
    kinds = ", ".join(f"{kind}={n}" for kind, n in sorted((requests.errors or {}).items(), key=lambda kv: -kv[1]))
    return (f"goodput: error: no request in the measurement window succeeded ({measured} measured; errors by kind: "
            f"{kinds or 'none'})")
