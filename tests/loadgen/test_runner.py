from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from loadgen.dispatch.gc_freeze import GcFreezer
from loadgen.dispatch.recorder import RecordWriter
from loadgen.dispatch.runner import Runner, RunPlan
from loadgen.types import WorkItem
from loadgen.workload.arrivals import parse_arrival
from loadgen.workload.lengths import parse_length
from loadgen.workload.sources import SyntheticWorkload
from loadgen.workload.text import count_words
from metrics.records.record import RequestRecord, read_records
from tests.loadgen._plans import run_plan

WORKLOAD = SyntheticWorkload(parse_length("4"), parse_length("2"), 0, "words", count_words)


class FakeSender:
    """Answers after `delay_s`, recording when each request was dispatched and how many overlapped."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.in_flight = 0
        self.max_in_flight = 0

    async def send(self, item: WorkItem, *, request_id: int, intended_ns: int, anchor_ns: int) -> RequestRecord:
        sent = time.perf_counter_ns() - anchor_ns
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay_s)
        except asyncio.CancelledError:
            return RequestRecord(id=request_id, intended_ns=intended_ns, sent_ns=sent, status="cancelled",
                                 error_kind="client_cancelled")
        finally:
            self.in_flight -= 1
        now = time.perf_counter_ns() - anchor_ns
        return RequestRecord(id=request_id, intended_ns=intended_ns, sent_ns=sent, chunk_ns=[now], closed_ns=now)


def plan(kind: str, *, rate: float | None = None, concurrency: int | None = None, count: int | None = None,
         duration_s: float | None = None, grace_s: float = 5.0) -> RunPlan:
    arr = parse_arrival(kind, rate=rate, burstiness=1.0, rate_end=None, concurrency=concurrency)
    return run_plan(arr, duration_s=duration_s, count=count, seed=0, grace_s=grace_s)


async def test_open_loop_dispatches_on_absolute_schedule(tmp_path: Path) -> None:
    writer = RecordWriter(tmp_path / "records.jsonl")
    runner = Runner(FakeSender(0.05), WORKLOAD, plan("constant", rate=50.0, count=20), hooks=[writer])
    state = await runner.run()
    writer.close()
    assert state.sent == state.done == 20 and not state.interrupted
    recs = sorted(state.records, key=lambda r: r.id)
    assert [r.intended_ns for r in recs] == [i * 20_000_000 for i in range(20)]
    lags = [r.sent_ns - r.intended_ns for r in recs if r.sent_ns is not None]
    assert min(lags) >= 0 and max(lags) < 100_000_000  # generous: the machine is shared
    assert sorted(r.id for r in read_records(str(tmp_path / "records.jsonl"))) == list(range(20))


async def test_lateness_does_not_accumulate() -> None:
    """A slow send never pushes later intended times: they stay on the schedule."""
    runner = Runner(FakeSender(0.3), WORKLOAD, plan("constant", rate=100.0, count=30))
    state = await runner.run()
    assert max(r.intended_ns for r in state.records) == 290_000_000
    assert runner.state.in_flight == 0


async def test_stop_gives_grace_then_cancels() -> None:
    sender = FakeSender(30.0)
    runner = Runner(sender, WORKLOAD, plan("constant", rate=20.0, duration_s=60.0, grace_s=0.2))
    asyncio.get_running_loop().call_later(0.3, runner.stop)
    t0 = time.monotonic()
    state = await runner.run()
    assert time.monotonic() - t0 < 10
    assert state.interrupted and state.sent == state.done == len(state.records) > 0
    assert {r.status for r in state.records} == {"cancelled"}


async def test_closed_loop_keeps_concurrency() -> None:
    sender = FakeSender(0.02)
    state = await Runner(sender, WORKLOAD, plan("concurrency", concurrency=3, count=12)).run()
    assert state.done == 12 and sender.max_in_flight == 3
    assert sorted(r.id for r in state.records) == list(range(12))


async def test_closed_loop_rate_cap() -> None:
    sender = FakeSender(0.0)
    t0 = time.monotonic()
    state = await Runner(sender, WORKLOAD, plan("concurrency", concurrency=4, rate=20.0, count=10)).run()
    assert state.done == 10
    assert time.monotonic() - t0 >= 0.4  # 10 requests at 20/s cannot finish in less than ~0.45 s


async def test_closed_loop_duration_and_stop() -> None:
    sender = FakeSender(0.05)
    state = await Runner(sender, WORKLOAD, plan("concurrency", concurrency=2, duration_s=0.3)).run()
    assert 2 <= state.done <= 16 and not state.interrupted
    runner = Runner(FakeSender(30.0), WORKLOAD, plan("concurrency", concurrency=2, duration_s=60, grace_s=0.1))
    asyncio.get_running_loop().call_later(0.2, runner.stop)
    state = await runner.run()
    assert state.interrupted and state.done == 2 and {r.status for r in state.records} == {"cancelled"}


def test_torn_last_line_is_skipped(tmp_path: Path) -> None:
    p = tmp_path / "records.jsonl"
    good = RequestRecord(id=1, intended_ns=0, sent_ns=5)
    p.write_bytes(good.to_json() + b'{"id": 2, "intended_ns": 0, "sent_')
    assert read_records(str(p)) == [good]


@pytest.mark.parametrize("status", ["ok", "error"])
def test_record_round_trip(tmp_path: Path, status: str) -> None:
    rec = RequestRecord(id=3, intended_ns=10, sent_ns=12, status=status, chunk_ns=[20, 30], chunk_tokens=[1, 3],  # type: ignore[arg-type]
                        token_source="usage_delta", tags={"scenario": "a"}, server={"queue_s": 0.1})
    p = tmp_path / "r.jsonl"
    p.write_bytes(rec.to_json())
    assert read_records(str(p)) == [rec]


def test_gc_freezer_freezes_as_records_finish() -> None:
    import gc

    try:
        freezer = GcFreezer(every=3)
        after_start = gc.get_freeze_count()
        assert after_start > 0
        records = [RequestRecord(id=i, intended_ns=0, sent_ns=0, chunk_ns=[1, 2]) for i in range(3)]
        for r in records[:2]:
            freezer(r)
        assert gc.get_freeze_count() == after_start
        freezer(records[2])
        assert gc.get_freeze_count() > after_start
    finally:
        gc.unfreeze()


def test_no_request_leaves_before_its_time_under_uvloop() -> None:
    """uvloop's timers fire up to a millisecond early; the runner waits out the rest, so dispatch lag is
    never negative."""
    import uvloop

    async def main() -> list[RequestRecord]:
        runner = Runner(FakeSender(0.001), WORKLOAD, plan("constant", rate=400.0, count=200))
        return (await runner.run()).records

    records = uvloop.run(main())
    lags = [r.sent_ns - r.intended_ns for r in records if r.sent_ns is not None]
    assert len(lags) == 200 and min(lags) >= 0


async def test_runners_sharing_one_anchor_dispatch_the_one_schedule_between_them() -> None:
    """Two shares of one schedule (as two workers get them) send exactly the requests, at exactly the intended
    times, that one runner would: ids and intended times merge into the single-process schedule."""
    import dataclasses

    import numpy as np

    whole = plan("poisson", rate=200.0, count=40)
    single = await Runner(FakeSender(0.0), WORKLOAD, whole).run()
    anchor = time.perf_counter_ns()
    ids = np.arange(40)
    shares = [dataclasses.replace(whole, ids=ids[w::2], anchor_ns=anchor) for w in range(2)]
    states = await asyncio.gather(*(Runner(FakeSender(0.0), WORKLOAD, p).run() for p in shares))
    merged = sorted((r.id, r.intended_ns) for st in states for r in st.records)
    assert merged == sorted((r.id, r.intended_ns) for r in single.records)
    assert all(st.anchor_ns == anchor and st.planned == 20 for st in states)
    assert all(r.sent_ns is not None and r.sent_ns >= r.intended_ns for st in states for r in st.records)
