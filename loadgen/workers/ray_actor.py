"""A worker as a Ray actor (`goodput run --ray`): the same `WorkerCore` as a local worker process, its methods
called by the driver (loadgen.workers.ray_pool) through Ray. goodput (with its `ray` extra) must be
installed on every node; the task carries everything else, so no file needs to be shared."""

from __future__ import annotations

import os
import socket
import time

from loadgen.workers.core import Batch, Finished, WorkerCore, WorkerTask
from loadgen.workers.events import ActorPlace


class RayWorker:
    def __init__(self, task: WorkerTask) -> None:
        self.core = WorkerCore(task)

    def ready(self) -> ActorPlace:
        """Where this actor runs."""
        import ray

        return {"node_id": ray.get_runtime_context().get_node_id(), "node_ip": ray.util.get_node_ip_address(),  # type: ignore[no-untyped-call]
                "hostname": socket.gethostname(), "pid": os.getpid()}

    def clock(self) -> int:
        return time.perf_counter_ns()

    async def run(self, anchor_ns: int) -> Finished:
        return await self.core.run(anchor_ns)

    def take(self) -> Batch:
        return self.core.take()

    def stop(self) -> None:
        self.core.stop()
