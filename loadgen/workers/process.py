"""A local worker process: `python -m loadgen.workers.process`, started by the parent (loadgen.workers.local).

It reads its task from stdin, builds its client and runner, says it is ready, waits for the run's anchor,
dispatches its share, and streams its records back over a private copy of stdout (fd 1 itself is pointed
at stderr, so nothing printed can corrupt the stream). A thread does the sending: it blocks on the
outbox, then takes whatever else has finished meanwhile, so under load one message carries many records
and at low rates each record leaves as soon as it is made; when nothing finishes it still reports the
counters every 0.2 s.

Signals: the process runs in its own session, so a Ctrl-C at the terminal reaches only the parent, which
sends `stop` (the same grace period as a single process). If the parent dies (its pipe closes, or on
Linux the death signal), the worker exits at once: nobody is left to record what it would send.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import signal
import sys
import threading
from typing import Any

from loadgen.workers.core import Batch, Finished, WorkerCore, WorkerTask
from loadgen.workers.wire import HEADER, Failed, Go, Ready, Stop, frame, read_frame, unframe, write_all

HEARTBEAT_S = 0.2


class Pump(threading.Thread):
    """Sends the worker's batches to the parent as records finish (see the module docstring)."""

    def __init__(self, core: WorkerCore, fd: int) -> None:
        super().__init__(name="goodput-worker-pump", daemon=True)
        self.core = core
        self.fd = fd
        self.done = threading.Event()
        self._last: tuple[int, int] = (-1, -1)

    def run(self) -> None:
        core = self.core
        while True:
            try:
                first = core.outbox.get(timeout=HEARTBEAT_S)
            except queue.Empty:
                first = None
            batch = core.take()
            if first is not None:
                batch.records.insert(0, first)
            counters = (batch.sent, batch.in_flight)
            if batch.records or batch.started or counters != self._last:
                self._last = counters
                self._send(batch)
            if self.done.is_set() and core.outbox.empty():
                return

    def _send(self, batch: Batch) -> None:
        try:
            write_all(self.fd, frame(batch))
        except OSError:  # the parent is gone
            os._exit(1)


async def _read(reader: asyncio.StreamReader) -> Any:
    """The parent's next message; the pipe closing means the parent died: exit now, nobody would get the
    records."""
    try:
        size = HEADER.unpack(await reader.readexactly(HEADER.size))[0]
        return unframe(await reader.readexactly(size))
    except (asyncio.IncompleteReadError, ConnectionError):
        os._exit(1)


async def _control(reader: asyncio.StreamReader, core: WorkerCore) -> None:
    """Messages from the parent after `go`: `stop`."""
    while True:
        if isinstance(await _read(reader), Stop):
            core.stop()


async def _serve(core: WorkerCore, fd: int) -> Finished:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    stdin = os.fdopen(0, "rb", buffering=0)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    first = await _read(reader)
    if isinstance(first, Stop):
        core.stop()
        anchor_ns = 0
    else:
        assert isinstance(first, Go)
        anchor_ns = first.anchor_ns
    control = asyncio.create_task(_control(reader, core))
    pump = Pump(core, fd)
    pump.start()
    try:
        finished = await core.run(anchor_ns)
    finally:
        control.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await control
        pump.done.set()
        await asyncio.to_thread(pump.join)
    return finished


def _loop_factory() -> Any:
    with contextlib.suppress(ImportError):
        import uvloop

        return uvloop.new_event_loop
    return asyncio.new_event_loop


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    fd = os.dup(1)
    os.dup2(2, 1)  # anything printed goes to stderr, never into the record stream
    task: WorkerTask = read_frame(0)
    worker = task.share.worker
    try:
        core = WorkerCore(task)
    except Exception as exc:  # the task cannot be built here: say why, in one line
        write_all(fd, frame(Failed(worker, f"{type(exc).__name__}: {exc}")))
        return 1
    write_all(fd, frame(Ready(worker)))
    with asyncio.Runner(loop_factory=_loop_factory()) as runner:
        finished = runner.run(_serve(core, fd))
    write_all(fd, frame(finished))
    os.close(fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
