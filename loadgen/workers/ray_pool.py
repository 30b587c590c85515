"""Workers as Ray actors on a cluster's nodes (`goodput run --ray auto|ADDRESS --workers N`).

Ray does the cluster work: placing the actors (spread over the nodes, or only on nodes with a label,
`--ray-placement KEY=VALUE`), carrying the calls and their results, and telling when an actor or its node
is gone (a call then raises). This driver keeps the schedule and records.jsonl; each actor runs a
`WorkerCore` (loadgen.workers.ray_actor) on its share. Before the run, each node's clock offset to the
driver is measured from a few round trips (loadgen.workers.clock), and each actor gets the run's anchor
as its own clock reads it (the driver's anchor plus its node's offset); after the run the offsets are
measured again, which shows how far the clocks drifted. Records come back in batches: the driver asks
each actor for what finished every `POLL_S`.

Every actor takes one CPU of the cluster; actors that cannot be placed within `START_TIMEOUT_S` fail the
run before anything is sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any, TypedDict

from loadgen.workers.clock import ClockOffset, Sample, estimate_offset
from loadgen.workers.core import Finished, WorkerTask
from loadgen.workers.events import ActorPlace, Event, Lost, NodeClock, PoolInfo
from loadgen.workload import Arrival

START_TIMEOUT_S = 120.0
POLL_S = 0.05
CLOCK_SAMPLES = 9
LEAD_S = 0.5  # from the anchor being taken to the first intended send: every actor hears of it before


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RuntimeError("--ray needs Ray: pip install 'goodput[ray]'") from None
    return ray



class _ActorOptions(TypedDict, total=False):
    """Ray's `.options()` for each worker actor."""

    num_cpus: int
    scheduling_strategy: str
    max_restarts: int
    max_task_retries: int
    label_selector: dict[str, str]

def connect(address: str, workers: int | None, arrival: Arrival) -> tuple[int, bool]:
    """Join the cluster (`auto`: the one Ray finds, e.g. from RAY_ADDRESS) and say how many actors to start
    (`workers`, or one per alive node, at most the closed loop's slots) and whether this call connected
    (then `RayWorkers.close` disconnects). RuntimeError when it cannot."""
    ray = _ray()
    joined = not ray.is_initialized()
    if joined:
        try:
            ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise RuntimeError(f"cannot join the Ray cluster at {address}: {first}") from None
    if workers is not None:
        return workers, joined
    alive = sum(1 for node in ray.nodes() if node.get("Alive"))
    count = max(1, alive)
    return (count if arrival.open_loop else min(count, arrival.concurrency)), joined


def public_address(address: str) -> str:
    """The cluster address as it may be stored: without user info."""
    scheme, sep, rest = address.rpartition("://")
    host = rest.rpartition("@")[2]
    return f"{scheme}{sep}{host}"


def _why(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


class RayWorkers:
    mode = "ray"

    def __init__(self, tasks: list[WorkerTask], *, placement: dict[str, str] | None, address: str = "",
                 disconnect: bool = False) -> None:
        self.tasks = tasks
        self.placement = placement
        self.address = public_address(address)
        self.disconnect = disconnect
        self.events: asyncio.Queue[Event] = asyncio.Queue()
        self.actors: list[Any] = []
        self.where: list[ActorPlace] = []  # per actor: node, host, pid
        self.offsets: dict[str, ClockOffset] = {}  # per node id, before the run
        self.offsets_end: dict[str, ClockOffset] = {}
        self.driver_node = ""
        self._followers: list[asyncio.Task[None]] = []
        self._finished: set[int] = set()
        self._lost: set[int] = set()

    @property
    def count(self) -> int:
        return len(self.tasks)

    def lead_s(self) -> float:
        return LEAD_S

    async def start(self) -> None:
        ray = _ray()
        from loadgen.workers.ray_actor import RayWorker

        options: _ActorOptions = {"num_cpus": 1, "scheduling_strategy": "SPREAD", "max_restarts": 0,
                                   "max_task_retries": 0}
        if self.placement is not None:
            options["label_selector"] = dict(self.placement)
        actor_class = ray.remote(RayWorker)
        self.actors = [actor_class.options(**options).remote(task) for task in self.tasks]
        self.driver_node = ray.get_runtime_context().get_node_id()
        try:
            self.where = list(await asyncio.wait_for(
                asyncio.gather(*(actor.ready.remote() for actor in self.actors)), START_TIMEOUT_S))
        except TimeoutError:
            raise RuntimeError(f"Ray did not place {self.count} worker actors (one CPU each"
                               f"{', on nodes labelled ' + str(self.placement) if self.placement else ''}) within "
                               f"{START_TIMEOUT_S:g} s") from None
        except ray.exceptions.RayError as exc:
            raise RuntimeError(f"a Ray worker actor could not start: {_why(exc)}") from None
        self.offsets = await self._measure_clocks()

    async def _measure_clocks(self) -> dict[str, ClockOffset]:
        """Per node, the offset of its clock to the driver's (actors one after another: no call queues)."""
        samples: dict[str, list[Sample]] = {}
        for index, actor in enumerate(self.actors):
            if index in self._lost:
                continue
            node = self.where[index]["node_id"]
            for _ in range(CLOCK_SAMPLES):
                t0 = time.perf_counter_ns()
                reading = await actor.clock.remote()
                samples.setdefault(node, []).append((t0, int(reading), time.perf_counter_ns()))
        return {node: estimate_offset(s) for node, s in samples.items()}

    def applied_offset(self, node: str) -> int:
        """The offset the anchor is moved by on `node`: none on the driver's own host (one clock)."""
        return 0 if node == self.driver_node else self.offsets[node].offset_ns

    def go(self, anchor_ns: int) -> None:
        for index, actor in enumerate(self.actors):
            local_anchor = anchor_ns + self.applied_offset(self.where[index]["node_id"])
            self._followers.append(asyncio.create_task(self._follow(index, actor, local_anchor)))

    async def _follow(self, index: int, actor: Any, anchor_ns: int) -> None:
        ray = _ray()
        try:
            run = asyncio.ensure_future(actor.run.remote(anchor_ns))
            while True:
                batch = await actor.take.remote()
                self.events.put_nowait(batch)
                if run.done() and not batch.records:
                    break
                if len(batch.records) < 256:
                    await asyncio.wait({run}, timeout=POLL_S)
            finished: Finished = run.result()
        except ray.exceptions.RayError as exc:
            self._lost.add(index)
            self.events.put_nowait(Lost(index, _why(exc)))
            return
        self._finished.add(index)
        self.events.put_nowait(finished)

    def stop(self) -> None:
        for index, actor in enumerate(self.actors):
            if index not in self._finished:
                with contextlib.suppress(Exception):
                    actor.stop.remote()

    def kill(self, index: int) -> None:
        with contextlib.suppress(Exception):
            _ray().kill(self.actors[index])

    async def finish(self) -> None:
        """After the run: the clocks measured again, on the actors that finished."""
        with contextlib.suppress(Exception):
            self.offsets_end = await self._measure_clocks()

    def describe(self) -> PoolInfo:
        nodes: list[NodeClock] = []
        for node, offset in self.offsets.items():
            host = next(w for w in self.where if w["node_id"] == node)
            clock = offset.to_json()
            entry: NodeClock = {"node_id": node, "node_ip": host["node_ip"], "hostname": host["hostname"],
                                "same_clock_as_driver": node == self.driver_node,
                                "clock_offset_ns": clock["clock_offset_ns"],
                                "clock_uncertainty_ns": clock["clock_uncertainty_ns"],
                                "rtt_min_ns": clock["rtt_min_ns"], "samples": clock["samples"],
                                "applied_offset_ns": self.applied_offset(node)}
            end = self.offsets_end.get(node)
            if end is not None:
                entry["end"] = end.to_json()
                entry["drift_ns"] = end.offset_ns - offset.offset_ns
            nodes.append(entry)
        return {"mode": self.mode, "count": self.count, "address": self.address,
                "placement": "spread" if self.placement is None else self.placement,
                "actors": [{"worker": i, **w} for i, w in enumerate(self.where)], "nodes": nodes}

    async def close(self) -> None:
        for task in self._followers:
            task.cancel()
        for task in self._followers:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        ray = _ray()
        for actor in self.actors:
            with contextlib.suppress(Exception):
                ray.kill(actor)
        if self.disconnect:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(ray.shutdown)
