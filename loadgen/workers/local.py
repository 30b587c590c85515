"""Worker processes on this host (`goodput run --workers N`), as the parent sees them.

Each worker is `python -m loadgen.workers.process` (loadgen.workers.process), a child in its own session
(a terminal's Ctrl-C reaches the parent only, which stops the workers itself) that Linux also ends should
the parent die. The task goes down its stdin, messages come back on its stdout (loadgen.workers.wire); its
stderr is drained and its last lines kept, to say why it died. What arrives becomes events on one queue
for the coordinator (loadgen.workers.coordinator): batches, `Finished`, and `Lost` when a worker's stream
ends without `Finished`.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections import deque

from loadgen.workers.core import Finished, WorkerTask
from loadgen.workers.events import Event, Lost, PoolInfo
from loadgen.workers.wire import HEADER, Failed, Go, Ready, Stop, frame, unframe

START_TIMEOUT_S = 120.0


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux to SIGTERM it when the parent dies, even by SIGKILL."""
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def describe_exit(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name}"
    return f"exited with code {code}"


class _Worker:
    def __init__(self, index: int, proc: asyncio.subprocess.Process) -> None:
        self.index = index
        self.proc = proc
        self.stderr: deque[str] = deque(maxlen=20)
        self.finished = False
        self.reader: asyncio.Task[None] | None = None
        self.drainer: asyncio.Task[None] | None = None

    def send(self, message: object) -> None:
        stdin = self.proc.stdin
        if stdin is not None and not stdin.is_closing():
            with contextlib.suppress(ConnectionError, RuntimeError):
                stdin.write(frame(message))

    async def read(self) -> object:
        assert self.proc.stdout is not None
        size = HEADER.unpack(await self.proc.stdout.readexactly(HEADER.size))[0]
        return unframe(await self.proc.stdout.readexactly(size))

    def why(self) -> str:
        reason = describe_exit(self.proc.returncode)
        last = next((line for line in reversed(self.stderr) if line.strip()), None)
        return f"{reason}: {last.strip()}" if last else reason


class LocalWorkers:
    """N worker processes; `events` gets every batch, `Finished` and `Lost`, in the order they happen."""

    mode = "processes"

    def __init__(self, tasks: list[WorkerTask]) -> None:
        self.tasks = tasks
        self.workers: list[_Worker] = []
        self.events: asyncio.Queue[Event] = asyncio.Queue()

    @property
    def count(self) -> int:
        return len(self.tasks)

    def describe(self) -> PoolInfo:
        return {"mode": self.mode, "count": self.count, "pids": [w.proc.pid for w in self.workers]}

    async def start(self) -> None:
        """Start every worker and wait until each is ready; RuntimeError (nothing sent) when one cannot."""
        starting = [asyncio.create_task(self._start(t)) for t in self.tasks]
        try:
            done, pending = await asyncio.wait(starting, timeout=START_TIMEOUT_S,
                                               return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                task.result()  # the first worker that could not start
            if pending:
                raise RuntimeError(f"the worker processes did not start within {START_TIMEOUT_S:g} s")
        finally:  # interrupted, failed or timed out: no start is left running, no error left unread
            for task in starting:
                task.cancel()
            await asyncio.gather(*starting, return_exceptions=True)

    async def _start(self, task: WorkerTask) -> None:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "loadgen.workers.process", stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None, limit=2**26)
        worker = _Worker(task.share.worker, proc)
        self.workers.append(worker)
        worker.drainer = asyncio.create_task(self._drain_stderr(worker))
        worker.send(task)
        try:
            first = await worker.read()
        except (asyncio.IncompleteReadError, ConnectionError):
            await proc.wait()
            if worker.drainer is not None:
                await worker.drainer
            raise RuntimeError(f"worker {worker.index} could not start ({worker.why()})") from None
        if isinstance(first, Failed):
            raise RuntimeError(f"worker {worker.index} could not start: {first.message}")
        assert isinstance(first, Ready)
        worker.reader = asyncio.create_task(self._pump(worker))

    async def _drain_stderr(self, worker: _Worker) -> None:
        assert worker.proc.stderr is not None
        async for line in worker.proc.stderr:
            worker.stderr.append(line.decode(errors="replace"))

    async def _pump(self, worker: _Worker) -> None:
        while True:
            try:
                message = await worker.read()
            except (asyncio.IncompleteReadError, ConnectionError):
                break
            if isinstance(message, Finished):
                worker.finished = True
            self.events.put_nowait(message)  # type: ignore[arg-type]
        await worker.proc.wait()
        if worker.drainer is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await worker.drainer
        if not worker.finished:
            self.events.put_nowait(Lost(worker.index, worker.why()))

    def go(self, anchor_ns: int) -> None:
        for worker in self.workers:
            worker.send(Go(anchor_ns))

    def stop(self) -> None:
        for worker in self.workers:
            if not worker.finished:
                worker.send(Stop())

    def kill(self, index: int) -> None:
        for worker in self.workers:
            if worker.index == index and worker.proc.returncode is None:
                worker.proc.kill()

    async def finish(self) -> None:
        """Nothing to measure after the run: every local worker reads this host's one clock."""

    async def close(self) -> None:
        """Kill whatever still runs (after a failure) and wait for every process."""
        for worker in self.workers:
            if worker.proc.returncode is None:
                worker.proc.kill()
        for worker in self.workers:
            await worker.proc.wait()
            for task in (worker.reader, worker.drainer):
                if task is not None and not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
