"""Images are made off the dispatch path: in the prefetch threads, finished before their request's
instant, never on the event loop between a wake-up and its send."""

from __future__ import annotations

import asyncio
import threading
import time

from loadgen.dispatch.runner import Runner
from loadgen.types import WorkItem
from loadgen.workload.arrivals import parse_arrival
from loadgen.workload.images.attach import ImageWorkload
from loadgen.workload.images.spec import ImageSpec
from loadgen.workload.images.synth import ImageMaker, Picture
from loadgen.workload.lengths import parse_length
from loadgen.workload.sources import SyntheticWorkload
from loadgen.workload.text import count_words
from metrics.records.record import RequestRecord
from tests.loadgen._plans import run_plan


class TimedMaker(ImageMaker):
    """An ImageMaker that notes when and on which thread each request's images were finished."""

    made: dict[int, tuple[int, str]]

    def pictures(self, index: int) -> list[Picture]:
        out = super().pictures(index)
        self.made[index] = (time.perf_counter_ns(), threading.current_thread().name)
        return out


class Sender:
    def __init__(self) -> None:
        self.images: dict[int, int] = {}

    async def send(self, item: WorkItem, *, request_id: int, intended_ns: int, anchor_ns: int) -> RequestRecord:
        sent = time.perf_counter_ns() - anchor_ns
        self.images[request_id] = item.images
        await asyncio.sleep(0.01)
        now = time.perf_counter_ns() - anchor_ns
        return RequestRecord(id=request_id, intended_ns=intended_ns, sent_ns=sent, chunk_ns=[now], closed_ns=now)


async def test_images_are_ready_before_their_instant_and_made_off_the_loop() -> None:
    maker = TimedMaker(ImageSpec(count="2", size="256x256"), seed=0)
    maker.made = {}
    workload = ImageWorkload(SyntheticWorkload(parse_length("4"), parse_length("2"), 0, "words", count_words), maker)
    arrival = parse_arrival("constant", rate=20.0, burstiness=1.0, rate_end=None, concurrency=None)
    runner = Runner(sender := Sender(), workload, run_plan(arrival, count=30, seed=0, grace_s=5.0))
    state = await runner.run()
    workload.close()
    assert sender.images == {i: 2 for i in range(30)}
    loop_thread = threading.current_thread().name
    for record in state.records:
        done_ns, thread = maker.made[record.id]
        assert thread != loop_thread, record.id  # made by a prefetch thread
        assert record.sent_ns is not None and done_ns <= state.anchor_ns + record.sent_ns
        if record.id > 0:  # the first is due the instant the run starts: nothing can be ahead of it
            assert done_ns <= state.anchor_ns + record.intended_ns, record.id  # ready before it was due
