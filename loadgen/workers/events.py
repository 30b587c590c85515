"""What a pool of workers (local processes or Ray actors) tells the coordinator, and what the coordinator
asks of a pool."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol

from loadgen.workers.core import Batch, Finished


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

    def describe(self) -> dict[str, object]: ...

    async def start(self) -> None: ...

    def go(self, anchor_ns: int) -> None:
        """Start dispatching against `anchor_ns`, on this (the parent's) perf_counter_ns clock."""

    def stop(self) -> None: ...

    async def finish(self) -> None:
        """After the last worker finished: whatever the pool measures then (Ray: the clocks again)."""

    def kill(self, index: int) -> None: ...

    async def close(self) -> None: ...
