"""Dispatching one run from several processes: worker processes on this host (`goodput run --workers N`) or
Ray actors on a cluster's nodes (`--ray`). See docs/scale-out.md.

Between the dispatch core (loadgen.dispatch: each worker runs a `Runner` on its share) and the run's
orchestrator (loadgen.run, whose `with_workers` wires records.jsonl, the live metrics, the progress line
and the gate around them):

- `start_pool` (`start`): the load split into shares and the pool of workers started, from what
  `WorkerSetup` states of the run;
- `Coordinator` (`coordinator`): the parent's live view of the workers, in a runner's place for the
  record hooks; `WorkerMetrics` (`metrics`): the per-worker live metrics; `Pool` (`events`): what a pool
  of local processes or Ray actors answers to.

The names below are imported on first use (metrics.lazy_face): a worker process imports only what it runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics import lazy_names

if TYPE_CHECKING:
    from loadgen.workers.coordinator import Coordinator
    from loadgen.workers.events import Pool
    from loadgen.workers.metrics import WorkerMetrics
    from loadgen.workers.start import WorkerSetup, start_pool

__all__ = ["Coordinator", "Pool", "WorkerMetrics", "WorkerSetup", "start_pool"]

__getattr__ = lazy_names(__name__, {
    "Coordinator": "coordinator",
    "Pool": "events",
    "WorkerMetrics": "metrics",
    "WorkerSetup": "start", "start_pool": "start",
})
