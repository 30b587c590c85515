"""One `goodput run` from validated options to files on disk and an exit code.

Order matters for trust: the output directory was checked by the CLI; `run.json` exists before the first
request, records are appended as requests end, and whatever happens (server gone, Ctrl-C, SIGTERM, disk
full) the outputs are written with `complete` telling the truth. A run that ends before its first
request leaves no directory behind.

Exit codes, when several apply the first of: 130 interrupted; the gate's code (99 thresholds failed);
1 a runtime error (no request in the measurement window succeeded, or an output could not be written);
0. Each runtime error is one line on stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx

from exporters.console import format_summary
from exporters.files import write_json
from loadgen.http.payload import endpoint_url, public_url
from loadgen.run.directory import RunDir, discard
from loadgen.run.embedded import EmbeddedServerError, embedded_server
from loadgen.run.gate import abort_fields, finish_run_gate, watch_for_abort
from loadgen.run.outputs import (
    RECORDS_FILE,
    RUN_FILE,
    RUN_SCHEMA_VERSION,
    Outputs,
    build_outputs,
    run_summary_config,
)
from loadgen.run.progress import Progress
from loadgen.run.prometheus import RunExporters, add_server_section, start_exporters
from loadgen.run.recorder import RecordWriter
from loadgen.run.roofline import spec_from_models_entry
from loadgen.run.runner import GcFreezer, Runner, RunPlan, RunState
from loadgen.run.setup import RunSetup, client_config
from loadgen.run.sizing import resolve_sizing
from loadgen.types import ClientConfig

TOOL_VERSION = "0.1.0"
EXIT_RUNTIME_ERROR = 1
EXIT_INTERRUPTED = 130


@dataclass(slots=True)
class _Run:
    """What a run has got so far: the error paths read it to tell whether anything was sent."""

    run_info: dict[str, Any] = field(default_factory=dict)
    writer: RecordWriter | None = None
    state: RunState | None = None  # set just before dispatching begins
    server_prom: dict[str, Any] | None = None
    output_errors: list[OSError] = field(default_factory=list)  # result files that could not be written


def list_models(config: ClientConfig) -> list[dict[str, Any]]:
    """The server's `GET /v1/models` entries (RuntimeError when it cannot say)."""
    headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
    try:
        models_url = endpoint_url(config.base_url, "completions").removesuffix("completions") + "models"
        resp = httpx.get(models_url, headers=headers, timeout=10.0)
        resp.raise_for_status()
        entries = resp.json()["data"]
        if not entries or not all(isinstance(e, dict) and "id" in e for e in entries):
            raise ValueError("no model listed")
        return list(entries)
    except (httpx.HTTPError, KeyError, TypeError, ValueError) as exc:
        raise RuntimeError(f"could not list models at {public_url(config.base_url)}/v1/models ({exc}); pass --model") from None


def _sim_spec(config: ClientConfig, entries: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    """The roofline spec a sim-engine target announces for the model under test, if any."""
    if entries is None:
        try:
            entries = list_models(config)
        except RuntimeError:
            return None
    entry = next((e for e in entries if e.get("id") == config.model), None)
    return spec_from_models_entry(entry) if entry is not None else None


@contextlib.contextmanager
def _target(setup: RunSetup) -> Iterator[str]:
    target = setup.spec.target
    if target.url is not None:
        yield setup.secrets.url or target.url
    else:
        with embedded_server([*target.server_args, *setup.secrets.server_args]) as url:
            yield url


def describe_os_error(exc: OSError) -> str:
    """'PATH: reason' for a failed file operation, without Python's '[Errno N]' decoration."""
    reason = exc.strerror or str(exc)
    return f"{exc.filename}: {reason}" if exc.filename else reason


def _start(setup: RunSetup, run_dir: RunDir, base_url: str, run: _Run) -> ClientConfig:
    """Before the first request: the model, run.json and the record file."""
    out = run_dir.path
    spec = setup.spec
    client = client_config(setup, base_url=base_url, model=spec.target.model or "")
    entries = None
    if not client.model:
        entries = list_models(client)
        client = replace(client, model=str(entries[0]["id"]))
    roofline = setup.roofline if setup.roofline is not None else _sim_spec(client, entries)
    sizing = resolve_sizing(setup, client)  # probes the server: before run.json and the first scrape
    if sizing.counter is not None:
        setup.rebuild_workload(sizing.counter)
    if sizing.line is not None and (sizing.warning or not spec.outputs.quiet):
        print(sizing.line, file=sys.stderr)
    load = spec.load
    run.run_info = {
        "schema_version": RUN_SCHEMA_VERSION,
        "spec": spec.to_json(),
        "resolved": {"schedule_end_s": setup.schedule_end_s, "roofline": roofline,
                     "token_counter": client.token_counter, "ignore_eos": client.ignore_eos,
                     "prompt_sizing": sizing.to_json()},
        "target": public_url(base_url),
        "embedded": spec.target.embedded,
        "model": client.model,
        "endpoint": client.endpoint,
        "load": str(load.arrival),
        "open_loop": load.arrival.open_loop,
        "duration_s": load.duration_s,
        "requests": load.requests,
        "seed": load.seed,
        "workload": setup.workload.describe(),
        "tool_version": TOOL_VERSION,
        "output_dir": str(out),
        "complete": False,
    }
    write_json(out / RUN_FILE, run.run_info)
    run.writer = RecordWriter(out / RECORDS_FILE)
    return client


def _failed_start(run_dir: RunDir, run: _Run, line: str, code: int) -> int:
    """A run that sent nothing leaves nothing behind (loadgen.run.directory.discard)."""
    if run.state is None:
        if run.writer is not None:
            run.writer.close()
        discard(run_dir)
    print(line, file=sys.stderr)
    return code


def execute(setup: RunSetup, run_dir: RunDir, *, console: bool = True) -> int:
    """The run from start to exit code; `run_dir` was checked and created by the CLI. `console=False` keeps
    the summary off stdout (a sweep prints its own table); errors still go to stderr."""
    out = run_dir.path
    run = _Run()
    try:
        with _target(setup) as base_url:
            client = _start(setup, run_dir, base_url, run)
            exporters = start_exporters(setup.prom_options(), setup.summary_config(), run_id=out.name,
                                        model=client.model, arrival=setup.spec.load.arrival, base_url=base_url)
            try:
                _run_loop(setup, client, run, exporters)
                run.server_prom = exporters.finish(out)
                run.output_errors.extend(exporters.write_errors)
                with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C ends the linger, never the outputs
                    exporters.linger()
            finally:
                exporters.close()
    except EmbeddedServerError as exc:
        return _failed_start(run_dir, run, f"goodput: error: {exc}", EXIT_RUNTIME_ERROR)
    except OSError as exc:  # run.json or records.jsonl cannot be written, the metrics port is taken, ...
        return _failed_start(run_dir, run, f"goodput: error: {describe_os_error(exc)}", EXIT_RUNTIME_ERROR)
    except RuntimeError as exc:
        return _failed_start(run_dir, run, f"goodput: error: {exc}", EXIT_RUNTIME_ERROR)
    except KeyboardInterrupt:
        if run.state is not None:
            raise
        return _failed_start(run_dir, run, "goodput: interrupted before the first request; nothing was sent",
                             EXIT_INTERRUPTED)
    finally:
        if run.writer is not None:
            run.writer.close()
    assert run.state is not None
    return _conclude(setup, out, run, run.state, console=console)


def _conclude(setup: RunSetup, out: Path, run: _Run, state: RunState, *, console: bool = True) -> int:
    """After the last request: run.json, the result files, the console, the gate, the exit code."""
    writer = run.writer
    assert writer is not None
    info = run.run_info
    info.update(start_unix_s=state.start_unix_s, complete=not state.interrupted, interrupted=state.interrupted,
                unwritten_records=writer.unwritten, **abort_fields(setup.gate))
    if writer.error is not None:
        info["write_error"] = describe_os_error(writer.error)
    if info["aborted"] or writer.error is not None:
        info["complete"] = False  # stopped early: the planned load was not all sent
    try:
        write_json(out / RUN_FILE, info)
    except OSError as exc:  # the run.json written at the start stays
        run.output_errors.append(exc)
    summary = None
    built = None
    try:
        built = build_outputs(out, info)
        summary = built.summary
        add_server_section(out, summary, run.server_prom)
    except OSError as exc:
        run.output_errors.append(exc)
        if summary is None:
            summary = _summary_in_memory(out, info)
    if built is not None and summary is not None and setup.spec.outputs.html:
        _write_html(setup, out, built, run)
    del built
    if summary is not None and console:
        print(format_summary(summary))
        if run.server_prom is not None:
            from exporters.server_console import format_server_metrics

            print(format_server_metrics(run.server_prom, summary.get("server")))
    if console:
        print(f"results: {out}")
    gate_code = 0
    if summary is not None:
        try:
            gate_code = finish_run_gate(setup.gate, out, summary)
        except OSError as exc:  # the JUnit or Markdown file
            run.output_errors.append(exc)
    errors = _error_lines(out, run, state, summary)
    for line in errors:
        print(line, file=sys.stderr)
    if state.interrupted:
        return EXIT_INTERRUPTED
    if gate_code:
        return gate_code
    return EXIT_RUNTIME_ERROR if errors else 0


def _write_html(setup: RunSetup, out: Path, built: Outputs, run: _Run) -> None:
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


def _summary_in_memory(out: Path, info: dict[str, Any]) -> dict[str, Any] | None:
    """The summary of what records.jsonl holds, for the console when the result files cannot be written
    (disk full): the same figures `goodput report` gives once there is space again."""
    from metrics.records.frame import frame_from_jsonl
    from metrics.summary.build import summarize_frame

    try:
        return summarize_frame(frame_from_jsonl(out / RECORDS_FILE), run_summary_config(info), dict(info))[0]
    except (OSError, ValueError):
        return None


def _error_lines(out: Path, run: _Run, state: RunState, summary: dict[str, Any] | None) -> list[str]:
    """One line per runtime error of a finished run (each makes the exit code 1)."""
    writer = run.writer
    assert writer is not None
    lines = []
    if writer.error is not None:
        if writer.unwritten:
            counted = "" if _failed_to_write(run, out / RUN_FILE) else " (run.json: unwritten_records)"
            lost = f"{writer.unwritten} could not be written{counted}"
        else:
            lost = "the others were written once space came back"
        lines.append(f"goodput: error: cannot write {describe_os_error(writer.error)}; dispatching stopped after "
                     f"{state.sent} requests; records.jsonl holds {writer.written} of them, {lost}")
    elif state.failure is not None:
        lines.append(f"goodput: error: dispatching stopped: {state.failure}")
    if run.output_errors:
        names = ", ".join(dict.fromkeys(Path(e.filename).name if e.filename else "?" for e in run.output_errors))
        reason = run.output_errors[0].strerror or str(run.output_errors[0])
        lines.append(f"goodput: error: could not write {names} in {out} ({reason}); `goodput report {out}` "
                     "rebuilds the summaries from records.jsonl")
    if summary is not None and not state.interrupted:
        line = _nothing_succeeded(summary)
        if line is not None:
            lines.append(line)
    return lines


def _failed_to_write(run: _Run, path: Path) -> bool:
    return any(exc.filename == str(path) for exc in run.output_errors)


def _nothing_succeeded(summary: dict[str, Any]) -> str | None:
    """The line for a run in which no request of the measurement window succeeded, else None."""
    requests = summary.get("requests", {})
    measured, ok = int(requests.get("in_window", 0)), int(requests.get("in_window_ok", 0))
    if ok:
        return None
    if not measured:
        return "goodput: error: no request fell in the measurement window (check --warmup and --cooldown)"
    kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(requests.get("errors", {}).items(), key=lambda kv: -kv[1]))
    return f"goodput: error: no request in the measurement window succeeded ({measured} measured; {kinds or 'none ok'})"


def _run_loop(setup: RunSetup, client_config: ClientConfig, run: _Run, exporters: RunExporters) -> None:
    runner_factory: Callable[[], asyncio.AbstractEventLoop] = asyncio.new_event_loop
    with contextlib.suppress(ImportError):  # uvloop is a dependency on Linux/macOS, not on Windows
        import uvloop

        runner_factory = uvloop.new_event_loop
    with asyncio.Runner(loop_factory=runner_factory) as aio:
        aio.run(_main(setup, client_config, run, exporters))


async def _main(setup: RunSetup, client_config: ClientConfig, run: _Run, exporters: RunExporters) -> None:
    from loadgen.http.client import StreamingClient

    writer = run.writer
    assert writer is not None

    load = setup.spec.load
    plan = RunPlan(arrival=load.arrival, duration_s=load.duration_s, count=load.requests, seed=load.seed,
                   grace_s=load.grace_s, offsets=setup.schedule.offsets if setup.schedule is not None else None)
    loop = asyncio.get_running_loop()
    signals = (signal.SIGINT, signal.SIGTERM)
    # The loop takes SIGINT/SIGTERM over while requests are in flight (stop, grace, outputs); removing its
    # handlers resets them to the defaults, so the ones installed before (loadgen.cli.main) are put back.
    before = {sig: signal.getsignal(sig) for sig in signals}
    async with StreamingClient(client_config) as client:
        runner = Runner(client, setup.workload, plan, hooks=[writer, GcFreezer()])
        exporters.attach(runner)
        progress = None if setup.spec.outputs.quiet else Progress(runner.state, duration_s=load.duration_s)
        if progress is not None:
            runner.hooks.append(progress)
        for sig in signals:
            loop.add_signal_handler(sig, runner.stop)
        ticker = asyncio.create_task(progress.loop()) if progress is not None else None
        watcher = None if setup.gate is None else asyncio.create_task(
            watch_for_abort(runner, setup.gate, setup.summary_config(), dict(run.run_info)))
        run.state = runner.state  # from here on, requests may have been sent: the directory is kept
        try:
            await runner.run()
        finally:
            if watcher is not None:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher
            for sig in signals:
                loop.remove_signal_handler(sig)
                if before[sig] is not None:
                    signal.signal(sig, before[sig])
            if ticker is not None:
                ticker.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await ticker
            writer.close()
