"""What a pool of workers (local processes or Ray actors) tells the coordinator, and what the coordinator
asks of a pool."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol, TypedDict

from loadgen.workers.clock import ClockJson
from loadgen.workers.core import Batch, Finished


class WorkerLoss(TypedDict):
    """A lost worker, as run.json's `workers.lost[]` gives it."""

    worker: int
    reason: str
    at_s: float


class ActorPlace(TypedDict):
    """Where a Ray actor runs (its `ready()` answer)."""

    node_id: str
    node_ip: str
    hostname: str
    pid: int


class ActorEntry(ActorPlace):
    """run.json's `workers.actors[]`: the actor's worker index, then where it runs."""

    worker: int


class NodeClock(ClockJson, total=False):
    """run.json's `workers.nodes[]`: a Ray node, its clock against the driver's before the run (and after)."""

    node_id: str
    node_ip: str
    hostname: str
    same_clock_as_driver: bool
    applied_offset_ns: int
    end: ClockJson
    drift_ns: int


class PoolInfo(TypedDict, total=False):
    """run.json's `workers`: what the pool is (`Pool.describe`), and the workers lost during the run."""

    mode: str  # processes | ray
    count: int
    pids: list[int | None]  # processes
    address: str  # ray: the cluster, without user info
    placement: str | dict[str, str]  # ray: spread, or the node labels
    actors: list[ActorEntry]
    nodes: list[NodeClock]
    lost: list[WorkerLoss]


@dataclass(frozen=True, slots=True)
class Lost:
    """A worker that is gone before it finished: its process died, its actor or node failed."""

    worker: int
    reason: str


Event = Batch | Finished | Lost


class Pool(Protocol):
    events: asyncio.Queue[Event]

    @property
    def count(self) -> int: ...

    def describe(self) -> PoolInfo: ...

    async def start(self) -> None: ...

    def go(self, anchor_ns: int) -> None:
        """Start dispatching against `anchor_ns`, on this (the parent's) perf_counter_ns clock."""

    def stop(self) -> None: ...

    async def finish(self) -> None:
        """After the last worker finished: whatever the pool measures then (Ray: the clocks again)."""

    def kill(self, index: int) -> None: ...

    async def close(self) -> None: ...
