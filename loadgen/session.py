"""One `goodput run` from validated options to files on disk and an exit code.

Order matters for trust: the output directory and `run.json` exist before the first request, records
are appended as requests end, and whatever happens (server gone, Ctrl-C, SIGTERM) the outputs are written
with `complete` telling the truth.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx

from exporters.console import format_summary
from exporters.files import write_json
from exporters.textfile import TEXTFILE
from loadgen.arrivals import Arrival
from loadgen.embedded import EmbeddedServerError, embedded_server
from loadgen.gate_run import GatePlan, abort_fields, finish_run_gate, watch_for_abort
from loadgen.outputs import RECORDS_FILE, RUN_FILE, summary_config, write_outputs
from loadgen.payload import endpoint_url, public_url
from loadgen.progress import Progress
from loadgen.prom_run import SECTION_FILE, PromOptions, RunExporters, add_server_section, start_exporters
from loadgen.recorder import RecordWriter
from loadgen.roofline_report import spec_from_models_entry
from loadgen.runner import GcFreezer, Runner, RunPlan, RunState
from loadgen.scrape import SERIES_FILE
from loadgen.types import ClientConfig
from loadgen.workload import Workload

TOOL_VERSION = "0.1.0"
STALE_OUTPUTS = ("summary.json", "summary.csv", "records.parquet", TEXTFILE, SERIES_FILE, SECTION_FILE)
EXIT_INTERRUPTED = 130


@dataclass(slots=True)
class RunSetup:
    client: ClientConfig
    workload: Workload
    arrival: Arrival
    duration_s: float | None
    count: int | None
    seed: int
    grace_s: float
    settings: dict[str, Any]
    output: Path | None
    quiet: bool
    embedded_args: list[str] = field(default_factory=list)
    token_counter: str = "words"
    gate: GatePlan | None = None  # thresholds: judged at the end, optionally abort-on-fail during the run
    prom: PromOptions = field(default_factory=PromOptions)


def _out_dir(output: Path | None) -> Path:
    if output is None:
        output = Path("runs") / dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    output.mkdir(parents=True, exist_ok=True)
    for name in (RECORDS_FILE, RUN_FILE, *STALE_OUTPUTS):  # a reused directory must not mix two runs
        (output / name).unlink(missing_ok=True)
    return output


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
    if setup.client.base_url:
        yield setup.client.base_url
    else:
        with embedded_server(setup.embedded_args) as url:
            yield url


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def execute(setup: RunSetup) -> int:
    out = _out_dir(setup.output)
    # Until the event loop takes SIGINT/SIGTERM over, either one ends start-up cleanly (the embedded
    # server is stopped by its context manager), with nothing sent.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        with _target(setup) as base_url:
            client = replace(setup.client, base_url=base_url)
            entries = None
            if not client.model:
                entries = list_models(client)
                client = replace(client, model=str(entries[0]["id"]))
            if setup.settings.get("roofline") is None:
                setup.settings["roofline"] = _sim_spec(client, entries)
            run_info = {
                "target": public_url(base_url),
                "embedded": not setup.client.base_url,
                "model": client.model,
                "endpoint": client.endpoint,
                "load": str(setup.arrival),
                "open_loop": setup.arrival.open_loop,
                "duration_s": setup.duration_s,
                "requests": setup.count,
                "seed": setup.seed,
                "workload": setup.workload.describe(),
                "tool_version": TOOL_VERSION,
                "output_dir": str(out),
                "settings": setup.settings,
                "complete": False,
            }
            write_json(out / RUN_FILE, run_info)
            exporters = start_exporters(setup.prom, setup.settings, run_id=out.name, model=client.model,
                                        arrival=setup.arrival, base_url=base_url)
            try:
                state = _run_loop(setup, client, out, exporters)
                server_prom = exporters.finish(out)
                with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C ends the linger, never the outputs
                    exporters.linger()
            finally:
                exporters.close()
    except (EmbeddedServerError, RuntimeError) as exc:
        print(f"goodput: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("goodput: interrupted before the first request; nothing was sent", file=sys.stderr)
        return EXIT_INTERRUPTED
    run_info.update(start_unix_s=state.start_unix_s, complete=not state.interrupted,
                    interrupted=state.interrupted, **abort_fields(setup.gate))
    if run_info["aborted"]:
        run_info["complete"] = False  # stopped by a threshold: the planned load was not all sent
    write_json(out / RUN_FILE, run_info)
    summary = write_outputs(out, run_info)
    add_server_section(out, summary, server_prom)
    print(format_summary(summary))
    if server_prom is not None:
        from exporters.server_console import format_server_metrics

        print(format_server_metrics(server_prom))
    print(f"results: {out}")
    gate_code = finish_run_gate(setup.gate, out, summary)
    return EXIT_INTERRUPTED if state.interrupted else gate_code


def _run_loop(setup: RunSetup, client_config: ClientConfig, out: Path, exporters: RunExporters) -> RunState:
    runner_factory: Callable[[], asyncio.AbstractEventLoop] = asyncio.new_event_loop
    with contextlib.suppress(ImportError):  # uvloop is a dependency on Linux/macOS, not on Windows
        import uvloop

        runner_factory = uvloop.new_event_loop
    with asyncio.Runner(loop_factory=runner_factory) as aio:
        return aio.run(_main(setup, client_config, out, exporters))


async def _main(setup: RunSetup, client_config: ClientConfig, out: Path, exporters: RunExporters) -> RunState:
    from loadgen.client import StreamingClient

    writer = RecordWriter(out / RECORDS_FILE)
    plan = RunPlan(arrival=setup.arrival, duration_s=setup.duration_s, count=setup.count, seed=setup.seed,
                   grace_s=setup.grace_s)
    loop = asyncio.get_running_loop()
    async with StreamingClient(client_config) as client:
        runner = Runner(client, setup.workload, plan, hooks=[writer, GcFreezer()])
        exporters.attach(runner)
        progress = None if setup.quiet else Progress(runner.state, duration_s=setup.duration_s)
        if progress is not None:
            runner.hooks.append(progress)
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, runner.stop)
        ticker = asyncio.create_task(progress.loop()) if progress is not None else None
        watcher = None if setup.gate is None else asyncio.create_task(
            watch_for_abort(runner, setup.gate, summary_config(setup.settings), {"settings": setup.settings}))
        try:
            state = await runner.run()
        finally:
            if watcher is not None:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
            if ticker is not None:
                ticker.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await ticker
            writer.close()
    return state
