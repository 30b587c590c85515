"""The rates of a prediction in parallel: each rate is an independent virtual run of the same workload, so
worker processes forked after the workload is built (they share it, nothing is pickled but a rate's index
and its Point) run one rate at a time, and the points come back in rate order.

Only where the platform forks: elsewhere, with one job or one rate, the rates run in this process, one
after another. A workload error (ValueError) in a worker comes back as that same ValueError, the first in
rate order, as it would in process; any other exception is re-raised as it came.

The pool is this module's own, with no thread and no lock shared with the workers: each worker has a pipe
for its next rate's index and one for its answers, the parent waits on the answers with `select`, and any
way out of `map_rates` (an error, Ctrl-C) kills the workers still running and reaps them. A worker that
dies without answering (killed, out of memory) is an error; a multiprocessing.Pool replaced it and waited
for the lost rate forever. Workers ignore SIGINT: Ctrl-C interrupts the parent, which ends them.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import select
import signal
import struct
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from loadgen.predict.predict import Fleet, Point, RequestsAt, point
from loadgen.predict.step_model import StepModel
from metrics import SLO

_SIZE = struct.Struct("!I")


def default_jobs() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def can_fork() -> bool:
    return hasattr(os, "fork")


@dataclass(slots=True)
class _Worker:
    pid: int
    tasks: int  # the parent writes a rate's index here
    answers: int  # and reads the pickled outcome here
    busy: int | None = None  # the index it runs


def _read_exact(fd: int, n: int) -> bytes:
    out = b""
    while len(out) < n:
        part = os.read(fd, n - len(out))
        if not part:
            raise EOFError
        out += part
    return out


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _serve(task: Callable[[float], Point], rates: Sequence[float], tasks: int, answers: int) -> None:
    """A worker's life: run the rate of every index it is given, answer with its Point or the exception;
    it ends when the parent closes its task pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent takes Ctrl-C and ends the workers
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    while True:
        try:
            (index,) = _SIZE.unpack(_read_exact(tasks, _SIZE.size))
        except EOFError:
            return
        outcome: Point | Exception
        try:
            outcome = task(rates[index])
        except ValueError as exc:  # a usage error: back to the parent, which raises the first in rate order
            outcome = ValueError(str(exc))
        except Exception as exc:
            outcome = exc
        try:
            data = pickle.dumps(outcome)
        except Exception as exc:
            data = pickle.dumps(RuntimeError(f"{type(outcome).__name__}: {outcome} (and it does not pickle: {exc})"))
        _write_all(answers, _SIZE.pack(len(data)) + data)


def _fork(task: Callable[[float], Point], rates: Sequence[float], others: list[_Worker]) -> _Worker:
    task_r, task_w = os.pipe()
    answer_r, answer_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker: never returns into the parent's code, nor runs its exit handlers
        code = 0
        try:
            # the parent's ends, its own and the workers' forked before: an earlier worker reads EOF only
            # when no process holds its task pipe's writing end
            for fd in (task_w, answer_r, *(f for w in others for f in (w.tasks, w.answers))):
                os.close(fd)
            _serve(task, rates, task_r, answer_w)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(task_r)
    os.close(answer_w)
    return _Worker(pid, task_w, answer_r)


def _give(worker: _Worker, index: int) -> None:
    worker.busy = index
    _write_all(worker.tasks, _SIZE.pack(index))


def _end(workers: list[_Worker], kill: bool) -> None:
    """Close the pipes (an idle worker reads EOF and exits), kill the rest when `kill`, reap all."""
    for w in workers:
        for fd in (w.tasks, w.answers):
            with contextlib.suppress(OSError):
                os.close(fd)
        if kill:
            with contextlib.suppress(ProcessLookupError):
                os.kill(w.pid, signal.SIGKILL)
    for w in workers:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(w.pid, 0)


def map_rates(task: Callable[[float], Point], rates: Sequence[float], jobs: int) -> list[Point]:
    """`task` at every rate, in rate order, in up to `jobs` forked workers (in this process with one job,
    one rate, or no fork). Raises the first exception in rate order (a ValueError as the worker raised it)."""
    jobs = min(jobs, len(rates))
    if jobs <= 1 or not can_fork():
        return [task(rate) for rate in rates]
    sys.stdout.flush()
    sys.stderr.flush()
    workers: list[_Worker] = []
    done: dict[int, Point | BaseException] = {}
    finished = False
    try:
        gc.freeze()  # the workers' collections skip the workload: its pages stay shared, not copied
        try:
            for _ in range(jobs):
                workers.append(_fork(task, rates, workers))
        finally:
            gc.unfreeze()
        queue = iter(range(len(rates)))
        for w in workers:
            _give(w, next(queue))
        points: list[Point] = []
        while len(points) < len(rates):
            if len(points) in done:
                value = done.pop(len(points))
                if isinstance(value, BaseException):
                    raise value
                points.append(value)
                continue
            ready, _, _ = select.select([w.answers for w in workers if w.busy is not None], [], [])
            for w in workers:
                if w.answers not in ready or w.busy is None:
                    continue
                try:
                    (size,) = _SIZE.unpack(_read_exact(w.answers, _SIZE.size))
                    done[w.busy] = pickle.loads(_read_exact(w.answers, size))
                except EOFError:
                    raise RuntimeError(f"a prediction worker (pid {w.pid}) ended before it answered") from None
                w.busy = None
                index = next(queue, None)
                if index is not None:
                    _give(w, index)
        finished = True
        return points
    finally:
        _end(workers, kill=not finished)


def points_at(model: StepModel, rates: Sequence[float], requests_at: RequestsAt, slo: SLO | None,
              fleet: Fleet, jobs: int = 1) -> list[Point]:
    """loadgen.predict.point at every rate, in up to `jobs` processes (map_rates)."""
    return map_rates(lambda rate: point(model, rate, requests_at, slo, fleet), rates, jobs)
