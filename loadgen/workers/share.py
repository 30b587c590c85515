"""How one run's load is split between its workers, so that together they send exactly what one process would.

- Open loop (an arrival process, a trace replay; with `--turns` the sessions' first turns): the schedule
  is drawn once, by the parent, and worker k of N dispatches entries k, k + N, k + 2N, ... at their
  intended times, against the run's one anchor. Every entry keeps its index as its request id (its session
  index with `--turns`), so the merged records carry exactly the single-process schedule.
- Closed loop (`--arrival concurrency`): worker k keeps its part of the slots (`concurrency // N`, one
  more for the first `concurrency % N` workers) and of an optional rate cap (`rate / N`). Its i-th request
  is request `k + N·i` of the run (the same prompt a single process would send as that request), so ids
  never collide; with `--requests` the worker sends the ids of that form below the count.
- Sessions never cross workers: a worker runs every turn of the sessions it starts.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from loadgen.dispatch import RunPlan
from loadgen.workload import Arrival

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Share:
    """One worker's part of the run."""

    worker: int
    workers: int
    ids: IntArray | None = None  # open loop: the schedule entries this worker dispatches
    concurrency: int = 0  # closed loop: this worker's slots
    rate_cap: float = 0.0  # closed loop: this worker's part of the rate cap (0: none)
    count: int | None = None  # closed loop bounded by --requests: how many of the run's ids are this worker's

    @property
    def open_loop(self) -> bool:
        return self.ids is not None

    def global_id(self, local: int) -> int:
        """The run's request (or session) id of this worker's closed-loop request number `local`."""
        return self.worker + self.workers * local

    def local_index(self, global_id: int) -> int:
        return (global_id - self.worker) // self.workers


def open_loop_ids(total: int, worker: int, workers: int) -> IntArray:
    """The schedule entries of worker `worker` of `workers`: interleaved, so every worker's share spans the
    whole run and the merged dispatch times are the schedule itself."""
    return np.arange(worker, total, workers, dtype=np.int64)


def closed_loop_slots(concurrency: int, worker: int, workers: int) -> int:
    return concurrency // workers + (1 if worker < concurrency % workers else 0)


def closed_loop_count(count: int, worker: int, workers: int) -> int:
    """How many ids below `count` are of the form worker + workers·i."""
    return len(range(worker, count, workers))


def split(arrival: Arrival, offsets: npt.NDArray[np.float64] | None, count: int | None, workers: int) -> list[Share]:
    """Every worker's share; ValueError when the load cannot be split that many ways."""
    if workers < 1:
        raise ValueError(f"a run needs at least one worker, got {workers}")
    if offsets is not None:
        return [Share(k, workers, ids=open_loop_ids(int(offsets.size), k, workers)) for k in range(workers)]
    if arrival.concurrency < workers:
        raise ValueError(f"--concurrency {arrival.concurrency} cannot be split over {workers} workers")
    return [Share(k, workers, concurrency=closed_loop_slots(arrival.concurrency, k, workers),
                  rate_cap=arrival.rate / workers if arrival.rate else 0.0,
                  count=closed_loop_count(count, k, workers) if count is not None else None)
            for k in range(workers)]


def share_plan(plan: RunPlan, share: Share, *, anchor_ns: int) -> RunPlan:
    """The runner plan of one worker: the whole run's plan (`plan`) narrowed to its share, on the run's anchor."""
    if share.open_loop:
        return replace(plan, ids=share.ids, anchor_ns=anchor_ns)
    arrival = replace(plan.arrival, concurrency=share.concurrency, rate=share.rate_cap)
    return replace(plan, arrival=arrival, count=share.count, anchor_ns=anchor_ns)
