"""One `goodput run` from validated options to files on disk and an exit code.

Order matters for trust: the output directory was checked by the CLI; `run.json` exists before the first
request, records are appended as requests end, and whatever happens (server gone, Ctrl-C, SIGTERM, disk
full, a lost worker) the outputs are written with `complete` telling the truth. A run that ends before
its first request leaves no directory behind.

The requests are dispatched by this process (`_main` below), or, with `--workers N` or `--ray`, by worker
processes or Ray actors that stream their records back here (loadgen.workers.drive); everything else is
the same either way. The end of the run (result files, gate, exit code) is loadgen.run.conclusion.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import httpx

from exporters.files import write_json
from loadgen.http.payload import endpoint_url, needs_tls, public_url
from loadgen.run.directory import RunDir, discard
from loadgen.run.embedded import EmbeddedServerError, embedded_server
from loadgen.run.layout import RECORDS_FILE, RUN_FILE, RUN_SCHEMA_VERSION
from loadgen.run.model_len import ContextTooSmall, check_context
from loadgen.run.outcome import EXIT_INTERRUPTED, EXIT_RUNTIME_ERROR, EXIT_USAGE, RunSoFar, describe_os_error
from loadgen.run.progress import Progress
from loadgen.run.prometheus import RunExporters, start_exporters
from loadgen.run.recorder import RecordWriter
from loadgen.run.roofline import spec_from_models_entry
from loadgen.run.runner import GcFreezer, Runner
from loadgen.run.setup import RunSetup, client_config
from loadgen.run.sizing import resolve_sizing
from loadgen.types import ClientConfig

TOOL_VERSION = "0.1.0"


def list_models(config: ClientConfig) -> list[dict[str, Any]]:
    """The server's `GET /v1/models` entries (RuntimeError when it cannot say)."""
    headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
    try:
        models_url = endpoint_url(config.base_url, "completions").removesuffix("completions") + "models"
        resp = httpx.get(models_url, headers=headers, timeout=10.0, verify=needs_tls(models_url))
        resp.raise_for_status()
        entries = resp.json()["data"]
        if not entries or not all(isinstance(e, dict) and "id" in e for e in entries):
            raise ValueError("no model listed")
        return list(entries)
    except (httpx.HTTPError, KeyError, TypeError, ValueError) as exc:
        raise RuntimeError(f"could not list models at {public_url(config.base_url)}/v1/models ({exc}); pass --model") from None


def models_or_none(config: ClientConfig) -> list[dict[str, Any]] | None:
    """`list_models`, or None when the server cannot say."""
    try:
        return list_models(config)
    except RuntimeError:
        return None


def _sim_spec(config: ClientConfig, entries: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    """The roofline spec a sim-engine target announces for the model under test, if any."""
    if entries is None:
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


def _start(setup: RunSetup, run_dir: RunDir, base_url: str, run: RunSoFar) -> ClientConfig:
    """Before the first request: the model, run.json and the record file."""
    out = run_dir.path
    spec = setup.spec
    client = client_config(setup, base_url=base_url, model=spec.target.model or "")
    entries = None
    if not client.model:
        entries = list_models(client)
        client = replace(client, model=str(entries[0]["id"]))
    if entries is None and setup.roofline is None:  # listed once: the sim spec and the context need them
        entries = models_or_none(client)
    roofline = setup.roofline if setup.roofline is not None else _sim_spec(client, entries)
    check_context(setup, client.model, entries)  # before anything is sent or written
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


def _failed_start(run_dir: RunDir, run: RunSoFar, line: str, code: int) -> int:
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
    run = RunSoFar()
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
    except ContextTooSmall as exc:
        return _failed_start(run_dir, run, f"goodput: error: {exc}", EXIT_USAGE)
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
    # The result files' machinery is imported only now, after the last request.
    from loadgen.run.conclusion import conclude

    return conclude(setup, out, run, run.state, console=console)


def _run_loop(setup: RunSetup, client_config: ClientConfig, run: RunSoFar, exporters: RunExporters) -> None:
    if setup.spec.scale.ray is not None or setup.local_workers() > 1:
        from loadgen.workers.drive import run_with_workers

        run_with_workers(setup, client_config, run, exporters)
        return
    runner_factory: Callable[[], asyncio.AbstractEventLoop] = asyncio.new_event_loop
    with contextlib.suppress(ImportError):  # uvloop is a dependency on Linux/macOS, not on Windows
        import uvloop

        runner_factory = uvloop.new_event_loop
    with asyncio.Runner(loop_factory=runner_factory) as aio:
        aio.run(_main(setup, client_config, run, exporters))


async def _main(setup: RunSetup, client_config: ClientConfig, run: RunSoFar, exporters: RunExporters) -> None:
    from loadgen.http.client import StreamingClient

    writer = run.writer
    assert writer is not None

    load = setup.spec.load
    plan = setup.run_plan()
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
        watcher = None
        if setup.gate is not None:
            from loadgen.run.gate import watch_for_abort

            watcher = asyncio.create_task(
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
