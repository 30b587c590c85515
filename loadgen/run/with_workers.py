"""A run dispatched by workers (`--workers N` on this host, or `--ray` on a cluster), from the parent's side.

The parent keeps everything a single process has around the dispatching: the one schedule (drawn once, in
loadgen.run.setup), records.jsonl and its writer, the live metrics, the progress line, abort-on-fail and
the signals; the workers only dispatch. This module wires those around the workers (loadgen.workers,
below it, knows nothing of them). In order:

1. Split the load and start the workers (loadgen.workers.start); each builds its client and runner and
   says it is ready. A worker that cannot start fails the run before anything is sent (exit 1, no
   directory left).
2. Take the anchor a little in the future (the pool's lead), after every worker is ready, and send it:
   all workers dispatch against it, so the merged intended times are exactly the schedule.
3. Receive the records as the workers stream them back and hand each to the hooks
   (loadgen.workers.coordinator): records.jsonl is the one file every reader already understands, each
   record's `worker` saying which worker sent it.
4. When every worker has finished (or was lost), the run concludes exactly as a single process does.

run.json gets a `workers` object: how the run was dispatched (`processes` or `ray`), the count, per worker
what was measured of it (Ray: its node and the node's clock offset to the driver, with its uncertainty),
and the workers lost, with why.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from typing import Any

from loadgen.dispatch import GcFreezer, Progress
from loadgen.run.failing import early_stop_hooks
from loadgen.run.gate import watch_for_abort
from loadgen.run.outcome import RunSoFar
from loadgen.run.prometheus import RunExporters
from loadgen.run.setup import RunSetup
from loadgen.types import ClientConfig
from loadgen.workers import Coordinator, Pool, WorkerMetrics, start_pool
from loadgen.workload import is_sessions
from metrics.results import json_object, write_run_file


def run_with_workers(setup: RunSetup, client: ClientConfig, run: RunSoFar, exporters: RunExporters) -> None:
    if setup.spec.scale.ray is not None:
        with asyncio.Runner() as aio:  # Ray's awaitables want the standard event loop
            aio.run(_main(setup, client, run, exporters))
        return
    factory: Any = asyncio.new_event_loop
    with contextlib.suppress(ImportError):
        import uvloop

        factory = uvloop.new_event_loop
    with asyncio.Runner(loop_factory=factory) as aio:
        aio.run(_main(setup, client, run, exporters))


async def _main(setup: RunSetup, client: ClientConfig, run: RunSoFar, exporters: RunExporters) -> None:
    writer = run.writer
    assert writer is not None
    load = setup.spec.load
    pool: Pool | None = None
    loop = asyncio.get_running_loop()
    signals = (signal.SIGINT, signal.SIGTERM)
    before = {sig: signal.getsignal(sig) for sig in signals}
    handlers = False
    ticker = watcher = None
    try:
        pool, tasks, lead_s = await start_pool(setup, client, local_workers=setup.local_workers())
        plan = tasks[0].plan
        sessions = is_sessions(setup.workload)
        planned = None if sessions else (int(plan.offsets.size) if plan.offsets is not None else plan.count)
        coordinator = Coordinator(pool, [t.share for t in tasks], workload=setup.workload, offsets=plan.offsets,
                                  sessions=sessions, count=plan.count, grace_s=load.grace_s,
                                  on_failure=setup.spec.scale.on_worker_failure, planned=planned)
        run.run_info = run.info().with_workers(json_object(pool.describe()))
        write_run_file(writer.path.parent, run.run_info)  # what the workers are, before any request
        coordinator.hooks += [writer, GcFreezer(), *early_stop_hooks(setup.spec.load.keep_going)]
        exporters.attach(coordinator)
        exporters.add_collector(WorkerMetrics(coordinator))
        progress = None if setup.spec.outputs.quiet else Progress(coordinator.state, duration_s=load.duration_s)
        if progress is not None:
            coordinator.hooks.append(progress)
        for sig in signals:
            loop.add_signal_handler(sig, coordinator.stop)
        handlers = True
        ticker = asyncio.create_task(progress.loop()) if progress is not None else None
        if setup.gate is not None:  # abort-on-fail stops the coordinator as it would stop a runner
            watcher = asyncio.create_task(watch_for_abort(coordinator, setup.gate,
                                                          setup.summary_config(), run.info().to_json()))
        run.state = coordinator.state  # from here on, requests may have been sent: the directory is kept
        await coordinator.run(time.perf_counter_ns() + round(lead_s * 1e9))
        await pool.finish()
        run.run_info = run.info().with_workers(json_object({**pool.describe(), "lost": coordinator.losses}))
    finally:
        for task in (watcher, ticker):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if handlers:
            for sig in signals:
                loop.remove_signal_handler(sig)
                if before[sig] is not None:
                    signal.signal(sig, before[sig])
        if pool is not None:
            await pool.close()
        writer.close()
