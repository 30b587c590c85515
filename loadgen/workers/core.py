"""One worker's run, whatever carries it (a local process, loadgen.workers.process, or a Ray actor,
loadgen.workers.ray_actor): its own streaming client and runner on its share of the schedule, against the
run's one anchor, and its records handed out in batches.

A worker receives a `WorkerTask`: the run spec as JSON and the secrets (in memory only, never written),
the target URL and model the parent resolved, the workload the parent built (prompts are a pure function
of the seed and the request's index, sized as the parent sized them, so no dataset, trace or tokenizer
file needs to exist where the worker runs), the whole run's plan and the worker's share of it.
"""

from __future__ import annotations

import itertools
import queue
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import asyncio_throttle  # noqa: F401 - the runner's closed loop imports it as it starts: here, before the anchor

from loadgen.dispatch import GcFreezer, Runner, RunPlan, client_config_of
from loadgen.http.send import StreamingClient
from loadgen.secrets import Secrets
from loadgen.spec import RunSpec
from loadgen.types import ToolCall, WorkItem
from loadgen.workers.share import Share, share_plan
from loadgen.workload import AnyWorkload, is_sessions
from metrics.records import RequestRecord

if TYPE_CHECKING:
    from metrics.results import JsonObject

BATCH_LIMIT = 512  # records in one message at most: a message stays well under a megabyte


@dataclass(slots=True)
class WorkerTask:
    spec: JsonObject  # RunSpec.to_json()
    secrets: Secrets
    base_url: str
    model: str
    workload: AnyWorkload
    plan: RunPlan  # the whole run's (offsets, duration, count, seed, grace)
    share: Share


@dataclass(slots=True)
class Batch:
    """What a worker sends the parent: finished records, its live counters, and what it started since the
    last batch (request ids; with --turns, session indices), which tells the parent what was in flight
    should the worker be lost."""

    worker: int
    records: list[RequestRecord] = field(default_factory=list)
    sent: int = 0
    in_flight: int = 0
    started: list[int] = field(default_factory=list)


@dataclass(slots=True)
class Finished:
    worker: int
    interrupted: bool
    sent: int
    done: int


class _ClosedLoopItems:
    """A closed-loop worker's view of the workload: its request i is the run's request `share.global_id(i)`."""

    def __init__(self, inner: Any, share: Share) -> None:
        self._inner = inner
        self._share = share

    def item(self, index: int) -> WorkItem:
        return self._inner.item(self._share.global_id(index))  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:  # describe, ...
        return getattr(self._inner, name)


class _ClosedLoopSessions:
    """The same for conversations: its session i is the run's session `share.global_id(i)`."""

    def __init__(self, inner: Any, share: Share, started: deque[int]) -> None:
        self._inner = inner
        self._share = share
        self._started = started
        self.buster = _SessionKeys(inner.buster, share) if inner.buster is not None else None

    def session(self, index: int) -> Any:
        self._started.append(self._share.global_id(index))
        return self._inner.session(self._share.global_id(index))

    def __getattr__(self, name: str) -> Any:  # counter, describe, ...
        return getattr(self._inner, name)


class _OpenLoopSessions:
    """An open-loop conversation workload that notes which sessions were started."""

    def __init__(self, inner: Any, started: deque[int]) -> None:
        self._inner = inner
        self._started = started

    def session(self, index: int) -> Any:
        self._started.append(index)
        return self._inner.session(index)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _SessionKeys:
    """--cache-bust keys of a closed-loop worker's turns ("session.turn") in the run's session numbering."""

    def __init__(self, inner: Any, share: Share) -> None:
        self._inner = inner
        self._share = share

    def apply(self, item: WorkItem, key: str) -> WorkItem:
        session, dot, turn = key.partition(".")
        if dot and session.isdigit():
            key = f"{self._share.global_id(int(session))}.{turn}"
        return self._inner.apply(item, key)  # type: ignore[no-any-return]


class _NotingSender:
    """The streaming client, noting each request it is asked to send."""

    def __init__(self, client: StreamingClient, share: Share, started: deque[int]) -> None:
        self._client = client
        self._started = started
        self._share = share
        self._closed_loop = not share.open_loop

    async def send(self, item: WorkItem, *, request_id: int, intended_ns: int, anchor_ns: int,
                   text_out: list[str] | None = None, calls_out: list[ToolCall] | None = None) -> RequestRecord:
        if text_out is None:
            self._started.append(self._share.global_id(request_id) if self._closed_loop else request_id)
            return await self._client.send(item, request_id=request_id, intended_ns=intended_ns, anchor_ns=anchor_ns)
        return await self._client.send(item, request_id=request_id, intended_ns=intended_ns, anchor_ns=anchor_ns,
                                       text_out=text_out, calls_out=calls_out)


class WorkerCore:
    def __init__(self, task: WorkerTask) -> None:
        spec = RunSpec.from_json(task.spec)
        self.share = share = task.share
        self.plan = task.plan
        self.config = client_config_of(spec, task.secrets, base_url=task.base_url, model=task.model)
        counter = self.config.token_counter
        if counter not in (None, "words", "bytes") and not Path(str(counter)).is_file():
            # The client splits output tokens with it when the server does not count them: on another host
            # the file must be there too (everything else the worker needs comes with its task).
            raise FileNotFoundError(f"--tokenizer {counter}: no such file on this host")
        self.sessions = is_sessions(task.workload)
        self.started: deque[int] = deque()  # appended on the event loop, taken from another thread
        workload: Any = task.workload
        if hasattr(workload, "prime"):  # images of its first requests, made while it waits for the anchor
            workload.prime(share.ids[:8].tolist() if share.ids is not None else map(share.global_id, range(8)))
        if not share.open_loop:
            workload = (_ClosedLoopSessions(workload, share, self.started) if self.sessions
                        else _ClosedLoopItems(workload, share))
        elif self.sessions:
            workload = _OpenLoopSessions(workload, self.started)
        self.workload = workload
        self.outbox: queue.SimpleQueue[RequestRecord] = queue.SimpleQueue()
        self.runner: Runner | None = None
        self._stop_asked = False

    def _out(self, record: RequestRecord) -> None:
        """Record hook: the run's numbering and this worker's number, then into the outbox."""
        record.worker = self.share.worker
        if not self.share.open_loop:
            if self.sessions:
                if record.session is not None:
                    record.session = self.share.global_id(record.session)
            else:
                record.id = self.share.global_id(record.id)
        self.outbox.put(record)

    async def run(self, anchor_ns: int) -> Finished:
        """Dispatch this worker's share against `anchor_ns` (this host's perf_counter_ns) until it is done or
        stopped; every finished record is in the outbox when this returns."""
        async with StreamingClient(self.config) as client:
            sender = _NotingSender(client, self.share, self.started)
            runner = Runner(sender, self.workload, share_plan(self.plan, self.share, anchor_ns=anchor_ns),
                            hooks=[self._out, GcFreezer()])
            if self.sessions:  # turn ids: this worker's residue class, so no two workers give the same id
                runner.record_ids = itertools.count(self.share.worker, self.share.workers)
            self.runner = runner
            if self._stop_asked:
                runner.stop()
            if not self.share.open_loop:  # the runner's closed loop starts at once: let it start on the anchor
                await runner.wait_until(anchor_ns)
            state = await runner.run()
        return Finished(self.share.worker, state.interrupted, state.sent, state.done)

    def stop(self) -> None:
        """Stop dispatching (in-flight requests get the grace period); safe before `run` starts."""
        self._stop_asked = True
        if self.runner is not None and not self.runner.stopping:
            self.runner.stop()

    def take(self, limit: int = BATCH_LIMIT) -> Batch:
        """The records finished since the last call (at most `limit`), the counters, the ids started."""
        records: list[RequestRecord] = []
        try:
            while len(records) < limit:
                records.append(self.outbox.get_nowait())
        except queue.Empty:
            pass
        started = []
        try:
            while True:
                started.append(self.started.popleft())
        except IndexError:
            pass
        state = self.runner.state if self.runner is not None else None
        return Batch(self.share.worker, records, sent=state.sent if state else 0,
                     in_flight=state.in_flight if state else 0, started=started)
