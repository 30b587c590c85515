"""The parent of a run dispatched by workers: one live view of all of them, and what happens when one is lost.

The coordinator stands where a single process's runner stands for everything around the dispatching: it
holds the run's `RunState` (sent and in flight are the sums of what the workers last reported; done,
errors and the records are what reached the parent) and hands every record, in the order it arrives, to
the same hooks (the record writer of records.jsonl, the live metrics, the progress line); abort-on-fail
reads it and stops it like a runner. `stop()` (SIGINT, SIGTERM, abort-on-fail, a record that cannot be
written) asks every worker to stop: each gives its in-flight requests the grace period, cancels the rest
and sends what it has; a worker still running `STOP_SLACK_S` after the grace period is killed and lost.

A lost worker (loadgen.workers.lost): its unfinished requests become `worker_lost` records; with
`--on-worker-failure stop` (the default) the run stops, with the loss as its failure (exit 1); with
`continue` a warning line says so and the others go on.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from loadgen.dispatch import RecordHook, RunState, deliver_record
from loadgen.workers.core import Batch, Finished
from loadgen.workers.events import Lost, Pool, WorkerLoss
from loadgen.workers.lost import Ledger
from loadgen.workers.share import Share
from metrics.records import RequestRecord

TICK_S = 0.1  # how often due lost requests and the stop deadline are looked at
STOP_SLACK_S = 15.0  # after the grace period, how long a stopping worker may take to report before it is killed
LAG_WINDOW = 1000  # per-worker dispatch lag: the most recent requests


class WorkerLost(RuntimeError):
    """A worker died and the run stopped (--on-worker-failure stop)."""


@dataclass(slots=True)
class WorkerView:
    """One worker as the live metrics see it."""

    ledger: Ledger
    active: bool = True
    lags_ns: deque[int] = field(default_factory=lambda: deque(maxlen=LAG_WINDOW))


class Coordinator:
    def __init__(self, pool: Pool, shares: list[Share], *, workload: Any, offsets: Any, sessions: bool,
                 count: int | None, grace_s: float, on_failure: str, planned: int | None) -> None:
        self.pool = pool
        self.workload = workload
        self.grace_s = grace_s
        self.on_failure = on_failure
        self.state = RunState(planned=planned)
        self.hooks: list[RecordHook] = []
        self.workers = [WorkerView(Ledger(s, offsets=offsets, sessions=sessions, count=count)) for s in shares]
        self.losses: list[WorkerLoss] = []  # for run.json
        self._stopped_at_ns: int | None = None
        self._stop_deadline: float | None = None

    # --- the runner's interface, as abort-on-fail and the signal handlers use it ---------------------

    @property
    def stopping(self) -> bool:
        return self.state.stopping

    def stop(self, *, interrupted: bool = True) -> None:
        st = self.state
        st.interrupted = st.interrupted or interrupted
        if st.stopping:
            return
        st.stopping = True
        self._stopped_at_ns = self._now_ns()
        self._emit_due(self._stopped_at_ns)  # what fell due before the stop; nothing after it is due
        self._stop_deadline = time.monotonic() + self.grace_s + STOP_SLACK_S
        self.pool.stop()

    def deliver(self, record: RequestRecord) -> None:
        """Count a record and hand it to every hook; a hook that raises stops the run (as in the runner)."""
        deliver_record(self.state, self.hooks, record, self.stop)

    # --- the run -----------------------------------------------------------------------------------

    async def run(self, anchor_ns: int) -> RunState:
        st = self.state
        st.anchor_ns = anchor_ns
        st.start_unix_s = time.time() - (time.perf_counter_ns() - anchor_ns) / 1e9
        self.pool.go(anchor_ns)
        while any(w.active for w in self.workers):
            try:
                event = await asyncio.wait_for(self.pool.events.get(), TICK_S)
            except TimeoutError:
                event = None
            if event is not None:
                self._handle(event)
            if not st.stopping:
                self._emit_due(self._now_ns())
            elif self._stop_deadline is not None and time.monotonic() > self._stop_deadline:
                for index, w in enumerate(self.workers):
                    if w.active:
                        self.pool.kill(index)
                self._stop_deadline = None
        if not st.stopping:
            self._emit_due(None)  # the run reached its end: whatever a lost worker still held was due
        self._count()
        return st

    def _now_ns(self) -> int:
        return time.perf_counter_ns() - self.state.anchor_ns

    def _handle(self, event: Batch | Finished | Lost) -> None:
        w = self.workers[event.worker]
        led = w.ledger
        if isinstance(event, Batch):
            led.sent, led.in_flight = event.sent, event.in_flight
            led.started.update(event.started)
            for record in event.records:
                led.note(record)
                if record.sent_ns is not None:
                    w.lags_ns.append(record.sent_ns - record.intended_ns)
                self.deliver(record)
        elif isinstance(event, Finished):
            led.sent, led.in_flight = event.sent, 0
            w.active = False
        else:
            self._lost(w, event.reason)
        self._count()

    def _lost(self, w: WorkerView, reason: str) -> None:
        led = w.ledger
        w.active = False
        at_ns = self._now_ns()
        led.lose(reason, at_ns)
        before = led.records
        self._emit_due(self._stopped_at_ns if self._stopped_at_ns is not None else at_ns)
        lost_now = led.records - before
        index = led.share.worker
        self.losses.append({"worker": index, "reason": reason, "at_s": round(at_ns / 1e9, 3)})
        line = (f"worker {index} was lost ({reason}); {lost_now} of its requests were in flight or due and are "
                "recorded as lost (error_kind worker_lost)")
        if self.on_failure == "continue" and not self.state.stopping:
            print(f"goodput: warning: {line}; the run goes on without it (--on-worker-failure continue)",
                  file=sys.stderr)
            return
        if self.state.failure is None:
            self.state.failure = WorkerLost(line)
        self.stop(interrupted=False)

    def _emit_due(self, upto_ns: int | None) -> None:
        for w in self.workers:
            if w.ledger.lost:
                for record in w.ledger.due(upto_ns, self.workload):
                    self.deliver(record)

    def _count(self) -> None:
        """The run's live counters: a lost worker counts what it delivered (its lost requests included) as
        dispatched, so dispatched = finished + in flight still holds."""
        st = self.state
        st.sent = sum(w.ledger.records if w.ledger.lost else w.ledger.sent for w in self.workers)
        st.in_flight = sum(0 if w.ledger.lost else w.ledger.in_flight for w in self.workers)
