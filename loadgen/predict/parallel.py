"""The rates of a prediction in parallel: each rate is an independent virtual run of the same workload, so
worker processes forked after the workload is built (they share it, nothing is pickled but a rate's index
and its Point) run one rate at a time, and the points come back in rate order.

Only where the platform forks (`fork` start method): elsewhere, with one job or one rate, the rates run in
this process, one after another. A workload error (ValueError) in a worker comes back as that same
ValueError, the first in rate order, as it would in process; any other exception is re-raised as it came.
Workers ignore SIGINT and take SIGTERM's default: Ctrl-C interrupts the parent, which terminates them.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Sequence
from multiprocessing.pool import Pool

from loadgen.predict.predict import Fleet, Point, RequestsAt, point
from loadgen.predict.step_model import StepModel
from metrics import SLO

# What the forked workers read: set just before the fork, cleared after (fork copies it; nothing pickled).
_TASK: Callable[[float], Point] | None = None
_RATES: Sequence[float] = ()


def default_jobs() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def _worker_init() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent takes Ctrl-C and terminates the workers
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not loadgen.cli's KeyboardInterrupt: terminate ends it


def _run_one(index: int) -> Point | ValueError:
    assert _TASK is not None
    try:
        return _TASK(_RATES[index])
    except ValueError as exc:  # a usage error: back to the parent, which raises the first in rate order
        return ValueError(str(exc))


def map_rates(task: Callable[[float], Point], rates: Sequence[float], jobs: int) -> list[Point]:
    """`task` at every rate, in rate order, in up to `jobs` forked workers (in this process with one job,
    one rate, or no fork). Raises the first ValueError in rate order."""
    global _TASK, _RATES
    jobs = min(jobs, len(rates))
    if jobs <= 1 or not can_fork():
        return [task(rate) for rate in rates]
    sys.stdout.flush()
    sys.stderr.flush()
    _TASK, _RATES = task, rates
    pool: Pool | None = None
    try:
        gc.freeze()  # the workers' collections skip the workload: its pages stay shared, not copied
        try:
            pool = multiprocessing.get_context("fork").Pool(jobs, initializer=_worker_init)
        finally:
            gc.unfreeze()
        points: list[Point] = []
        for result in pool.imap(_run_one, range(len(rates)), chunksize=1):
            if isinstance(result, ValueError):
                raise result
            points.append(result)
        pool.close()
        pool.join()
        return points
    finally:
        _TASK, _RATES = None, ()
        if pool is not None:
            pool.terminate()  # after an error or Ctrl-C: the workers still running stop here
            pool.join()


def points_at(model: StepModel, rates: Sequence[float], requests_at: RequestsAt, slo: SLO | None,
              fleet: Fleet, jobs: int = 1) -> list[Point]:
    """loadgen.predict.point at every rate, in up to `jobs` processes (map_rates)."""
    return map_rates(lambda rate: point(model, rate, requests_at, slo, fleet), rates, jobs)
