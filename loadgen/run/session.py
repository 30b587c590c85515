"""One `goodput run` from validated options to files on disk and an exit code.

Order matters for trust: the output directory was checked by the CLI; `run.json` exists before the first
request, records are appended as requests end, and whatever happens (server gone, Ctrl-C, SIGTERM, disk
full, a lost worker) the outputs are written with `complete` telling the truth. A run that ends before
its first request leaves no directory behind.

The requests are dispatched by this process (`_main` below), or, with `--workers N` or `--ray`, by worker
processes or Ray actors that stream their records back here (loadgen.run.with_workers); everything else is
the same either way. The end of the run (result files, gate, exit code) is loadgen.run.conclusion.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace

from loadgen.dispatch import GcFreezer, Progress, RecordWriter, Runner
from loadgen.http import public_url
from loadgen.redact import redact
from loadgen.run.cache_prediction import prediction_line, run_prediction
from loadgen.run.directory import RunDir, discard
from loadgen.run.embedded import EmbeddedServerError, ServerArgumentError, embedded_server
from loadgen.run.failing import early_stop_hooks
from loadgen.run.layout import RECORDS_FILE
from loadgen.run.model_len import ContextTooSmall, check_context
from loadgen.run.models import ServedModel, check_mix, list_models
from loadgen.run.outcome import EXIT_INTERRUPTED, EXIT_RUNTIME_ERROR, EXIT_USAGE, RunSoFar, describe_os_error
from loadgen.run.prometheus import RunExporters, server_metrics_url, start_exporters
from loadgen.run.roofline import RooflineSpecJSON
from loadgen.run.scrape import SCRAPE_TIMEOUT_S
from loadgen.run.setup import RunSetup, client_config
from loadgen.run.sizing import SIZING_LIMIT_S, resolve_sizing
from loadgen.run.startup import announced
from loadgen.types import ClientConfig
from metrics.results import RECORDS_STATUS_FILE as STATUS_FILE
from metrics.results import RunFile, RunResolved, RunStart, json_object, write_run_file

TOOL_VERSION = "0.1.0"


def _sim_spec(config: ClientConfig, entries: list[ServedModel] | None, *,
              embedded: bool) -> RooflineSpecJSON | None:
    """The roofline spec a sim-engine target announces for the model under test, if any. With --model, only
    the embedded server is asked (a --url target is not listed: loadgen.run.models)."""
    if entries is None:
        if not embedded:
            return None
        try:
            entries = list_models(config, quiet=True)
        except RuntimeError:
            return None
    entry = next((e for e in entries if e.id == config.model), None)
    return entry.sim_roofline if entry is not None else None


@contextlib.contextmanager
def _target(setup: RunSetup) -> Iterator[str]:
    target = setup.spec.target
    if target.url is not None:
        yield setup.secrets.url or target.url
    else:
        with embedded_server([*target.server_args, *setup.secrets.server_args],
                             quiet=setup.spec.outputs.quiet) as url:
            yield url


def _start(setup: RunSetup, run_dir: RunDir, base_url: str, run: RunSoFar) -> ClientConfig:
    """Before the first request: the model, run.json and the record file."""
    out = run_dir.path
    spec = setup.spec
    mix = setup.models
    client = client_config(setup, base_url=base_url, model=mix.names[0] if mix is not None else "")
    entries = None
    if not client.model:
        entries = list_models(client, quiet=spec.outputs.quiet)
        client = replace(client, model=entries[0].id)
    roofline = setup.roofline if setup.roofline is not None else _sim_spec(client, entries,
                                                                            embedded=spec.target.embedded)
    with announced("the server to size prompts", SIZING_LIMIT_S, quiet=spec.outputs.quiet):
        sizing = resolve_sizing(setup, client)  # probes the server: before run.json and the first scrape
    # Before anything is sent or written: the context from /v1/models (listed only without --model), else
    # as the tokenize endpoint said it.
    for model in mix.names if mix is not None else (client.model,):
        check_context(setup, model, entries, sizing.detail.get("max_model_len"))
    if mix is not None and len(mix.names) > 1:
        check_mix(client, mix.names, quiet=spec.outputs.quiet)
    if sizing.counter is not None:
        setup.rebuild_workload(sizing.counter)
    if sizing.line is not None and (sizing.warning or not spec.outputs.quiet):
        print(redact(sizing.line), file=sys.stderr)
    cache_prediction = run_prediction(setup.workload, server_metrics_url(setup.spec.prometheus.server_metrics, base_url))  # a trace replay's
    if cache_prediction is not None and not spec.outputs.quiet:
        print(prediction_line(cache_prediction), file=sys.stderr)
    load = spec.load
    multi = mix is not None and len(mix.names) > 1
    run.run_info = RunFile(RunStart(
        spec=spec.to_json(),
        resolved=RunResolved(schedule_end_s=setup.schedule_end_s,
                             roofline=json_object(roofline) if roofline is not None else None,
                             token_counter=client.token_counter, ignore_eos=client.ignore_eos,
                             prompt_sizing=json_object(sizing.to_json()),
                             prefix_cache_prediction=json_object(cache_prediction) if cache_prediction else None),
        target=public_url(base_url),
        embedded=spec.target.embedded,
        model=spec.target.model if multi else client.model,
        models=json_object(mix.describe()) if mix is not None and multi else None,
        endpoint=client.endpoint,
        load=str(load.arrival),
        open_loop=load.arrival.open_loop,
        duration_s=load.duration_s,
        requests=load.requests,
        seed=load.seed,
        workload=json_object(setup.workload.describe()),
        tool_version=TOOL_VERSION,
        output_dir=str(out),
    ))
    write_run_file(out, run.run_info)
    run.writer = RecordWriter(out / RECORDS_FILE, status=out / STATUS_FILE)
    return client


def _failed_start(run_dir: RunDir, run: RunSoFar, line: str, code: int) -> int:
    """A run that sent nothing leaves nothing behind (loadgen.run.directory.discard)."""
    if run.state is None:
        if run.writer is not None:
            run.writer.close()
        discard(run_dir)
    print(redact(line), file=sys.stderr)
    return code


def execute(setup: RunSetup, run_dir: RunDir, *, console: bool = True) -> int:
    """The run from start to exit code; `run_dir` was checked and created by the CLI. `console=False` keeps
    the summary off stdout (a sweep prints its own table); errors still go to stderr."""
    out = run_dir.path
    run = RunSoFar()
    try:
        with _target(setup) as base_url:
            client = _start(setup, run_dir, base_url, run)
            with announced("the server's /metrics", SCRAPE_TIMEOUT_S, quiet=setup.spec.outputs.quiet):
                exporters = start_exporters(setup.prom_options(), setup.summary_config(), run_id=out.name,
                                            model=str(run.info().start.model), arrival=setup.spec.load.arrival,
                                            base_url=base_url)
            try:
                _run_loop(setup, client, run, exporters)
                run.server_prom = exporters.finish(out)
                run.output_errors.extend(exporters.write_errors)
                with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C ends the linger, never the outputs
                    exporters.linger()
            finally:
                exporters.close()
    except ServerArgumentError as exc:  # nothing was sent: a usage error, like one found before the start
        return _failed_start(run_dir, run, f"goodput: error: {exc}", EXIT_USAGE)
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
        from loadgen.run.with_workers import run_with_workers

        run_with_workers(setup, client_config, run, exporters)
        return
    runner_factory: Callable[[], asyncio.AbstractEventLoop] = asyncio.new_event_loop
    with contextlib.suppress(ImportError):  # uvloop is a dependency on Linux/macOS, not on Windows
        import uvloop

        runner_factory = uvloop.new_event_loop
    with asyncio.Runner(loop_factory=runner_factory) as aio:
        aio.run(_main(setup, client_config, run, exporters))


async def _main(setup: RunSetup, client_config: ClientConfig, run: RunSoFar, exporters: RunExporters) -> None:
    from loadgen.http.send import StreamingClient

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
        runner = Runner(client, setup.workload, plan,
                        hooks=[writer, GcFreezer(), *early_stop_hooks(setup.spec.load.keep_going)])
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
                watch_for_abort(runner, setup.gate, setup.summary_config(), run.info().to_json()))
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
