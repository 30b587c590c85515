"""Starting the workers of a run: its load split into shares (loadgen.workers.share), one task per worker,
and the pool that carries them (local processes, loadgen.workers.local, or Ray actors,
loadgen.workers.ray_pool), started and ready to dispatch.

What this reads of the run is stated as `WorkerSetup` (the run's setup, loadgen.run.setup.RunSetup, lives
above this folder: the orchestrator calls in here, never the other way).
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from loadgen.dispatch import RunPlan
from loadgen.secrets import Secrets
from loadgen.spec import RunSpec
from loadgen.types import ClientConfig
from loadgen.workers.core import WorkerTask
from loadgen.workers.events import Pool
from loadgen.workers.share import split
from loadgen.workload import AnyWorkload

LEAD_S = 0.05  # local workers: from the anchor being taken to the first intended send
LEAD_PER_WORKER_S = 0.01


class WorkerSetup(Protocol):
    """What the workers are made from: the run's spec, secrets and built workload, and its plan."""

    @property
    def spec(self) -> RunSpec: ...
    @property
    def secrets(self) -> Secrets: ...
    @property
    def workload(self) -> AnyWorkload: ...

    def run_plan(self) -> RunPlan: ...


def make_tasks(setup: WorkerSetup, client: ClientConfig, workers: int) -> list[WorkerTask]:
    plan = setup.run_plan()
    shares = split(plan.arrival, plan.offsets, plan.count, workers)
    spec = setup.spec.to_json()
    return [WorkerTask(spec=spec, secrets=setup.secrets, base_url=client.base_url, model=client.model,
                       workload=setup.workload, plan=plan, share=share) for share in shares]


async def start_pool(setup: WorkerSetup, client: ClientConfig, *, local_workers: int
                     ) -> tuple[Pool, list[WorkerTask], float]:
    """The started workers (`--ray`: on the cluster, as many as it offers; else `local_workers` processes),
    their tasks, and how far ahead of the first send the anchor must be taken."""
    scale = setup.spec.scale
    if scale.ray is not None:
        from loadgen.workers.ray_pool import RayWorkers, connect

        count, joined = await asyncio.to_thread(connect, scale.ray, scale.workers, setup.spec.load.arrival)
        tasks = make_tasks(setup, client, count)
        ray_pool = RayWorkers(tasks, placement=scale.node_label(), address=scale.ray, disconnect=joined)
        try:
            await ray_pool.start()
        except BaseException:
            await ray_pool.close()
            raise
        return ray_pool, tasks, ray_pool.lead_s()
    from loadgen.workers.local import LocalWorkers

    tasks = make_tasks(setup, client, local_workers)
    local = LocalWorkers(tasks)
    try:
        await local.start()
    except BaseException:
        await local.close()
        raise
    return local, tasks, LEAD_S + LEAD_PER_WORKER_S * len(tasks)
