"""records.jsonl when the disk fills up: no cut line, records kept in memory and written when space
comes back (or counted), and the runner stops dispatching at the first failed write instead of leaving
the error in a task nobody awaits."""

from __future__ import annotations

import asyncio
import errno
import json
from pathlib import Path
from typing import Any

import pytest

from loadgen.dispatch.recorder import RecordWriteError, RecordWriter
from loadgen.dispatch.runner import Runner
from loadgen.types import WorkItem
from loadgen.workload.arrivals import parse_arrival
from loadgen.workload.lengths import parse_length
from loadgen.workload.sources import SyntheticWorkload
from loadgen.workload.text import count_words
from metrics.records.record import RequestRecord, read_records
from tests.loadgen._plans import run_plan

WORKLOAD = SyntheticWorkload(parse_length("4"), parse_length("2"), 0, "words", count_words)


class SmallDisk:
    """An append-only file on a disk with `free` bytes left: like write(2), a write that does not fit
    writes what fits and the next one fails with ENOSPC."""

    def __init__(self, free: int) -> None:
        self.free = free
        self.data = bytearray()

    def write(self, data: bytes | memoryview, /) -> int:
        if self.free <= 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        n = min(len(data), self.free)
        self.data += bytes(data[:n])
        self.free -= n
        return n

    def truncate(self, size: int, /) -> int:
        self.free += len(self.data) - size
        del self.data[size:]
        return size

    def tell(self) -> int:
        return len(self.data)

    def close(self) -> None:
        pass


def _record(i: int) -> RequestRecord:
    return RequestRecord(id=i, intended_ns=i * 1000, sent_ns=i * 1000 + 5, chunk_ns=[i * 1000 + 50], closed_ns=i * 1000 + 60)


def _ids(disk: SmallDisk) -> list[int]:
    lines = bytes(disk.data).splitlines(keepends=True)
    assert all(line.endswith(b"\n") for line in lines), "a cut line was left in the file"
    return [json.loads(line)["id"] for line in lines]


def test_a_write_that_does_not_fit_leaves_whole_records_and_keeps_the_rest(tmp_path: Path) -> None:
    size = len(_record(0).to_json())
    disk = SmallDisk(free=3 * size + size // 2)  # room for three and a half records
    writer = RecordWriter(tmp_path / "records.jsonl", opener=lambda _: disk)
    for i in range(3):
        writer(_record(i))
    with pytest.raises(RecordWriteError) as failed:
        writer(_record(3))
    assert failed.value.errno == errno.ENOSPC and "records.jsonl" in str(failed.value)
    with pytest.raises(RecordWriteError):
        writer(_record(4))
    assert _ids(disk) == [0, 1, 2]  # the half-written fourth record was cut off again
    assert writer.written == 3 and writer.unwritten == 2
    assert writer.error is not None and writer.error.filename == str(tmp_path / "records.jsonl")
    writer.close()
    assert writer.unwritten == 2  # still no space at the end: counted, not lost silently


def test_records_kept_in_memory_are_written_in_order_when_space_comes_back(tmp_path: Path) -> None:
    size = len(_record(0).to_json())
    disk = SmallDisk(free=size + 10)
    writer = RecordWriter(tmp_path / "records.jsonl", opener=lambda _: disk)
    writer(_record(0))
    for i in (1, 2):
        with pytest.raises(RecordWriteError):
            writer(_record(i))
    disk.free += 10 * size  # space came back
    writer(_record(3))
    assert _ids(disk) == [0, 1, 2, 3] and writer.unwritten == 0 and writer.written == 4
    disk.free = 0  # full again: the last try at close() gets the rest
    with pytest.raises(RecordWriteError):
        writer(_record(4))
    disk.free = len(_record(4).to_json())
    writer.close()
    assert _ids(disk) == [0, 1, 2, 3, 4] and writer.unwritten == 0
    assert writer.error is not None  # the run still reports that a write failed


def test_the_real_file_is_unbuffered_and_whole(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    writer = RecordWriter(path)
    writer(_record(1))
    assert read_records(str(path)) == [_record(1)]  # on disk before close: a SIGKILL keeps it
    writer.close()


class InstantSender:
    async def send(self, item: WorkItem, *, request_id: int, intended_ns: int, anchor_ns: int) -> RequestRecord:
        await asyncio.sleep(0.01)
        return _record(request_id)


async def test_a_failing_record_hook_stops_dispatching_and_every_request_is_counted() -> None:
    """The hook's error is the run's failure, not 'Task exception was never retrieved'."""
    unhandled: list[dict[str, Any]] = []
    asyncio.get_running_loop().set_exception_handler(lambda loop, ctx: unhandled.append(ctx))
    seen: list[int] = []

    def full_disk(record: RequestRecord) -> None:
        if len(seen) >= 3:
            raise RecordWriteError(errno.ENOSPC, "cannot write records.jsonl: No space left on device")
        seen.append(record.id)

    after: list[int] = []
    arrival = parse_arrival("constant", rate=100.0, burstiness=1.0, rate_end=None, concurrency=None)
    runner = Runner(InstantSender(), WORKLOAD, run_plan(arrival, count=200, grace_s=5.0),
                    hooks=[full_disk, lambda r: after.append(r.id)])
    state = await runner.run()
    assert isinstance(state.failure, RecordWriteError) and not state.interrupted and state.stopping
    assert state.sent < 50  # stopped at the first failure, not after all 200
    assert state.sent == state.done == len(state.records) == len(after)  # every hook saw every record
    assert unhandled == []


def test_the_unwritten_count_is_kept_in_a_status_file_rewritten_in_place(tmp_path: Path) -> None:
    from loadgen.dispatch.records_status import STATUS_BYTES, STATUS_FILE, read_status

    disk = SmallDisk(free=len(_record(0).to_json()) * 2 + 10)
    status = tmp_path / STATUS_FILE
    writer = RecordWriter(tmp_path / "records.jsonl", opener=lambda _: disk, status=status)
    inode = status.stat().st_ino
    assert read_status(tmp_path) == {"closed": False, "unwritten_records": 0, "write_error": None}
    writer(_record(0))
    writer(_record(1))
    for i in (2, 3, 4):
        with pytest.raises(RecordWriteError):
            writer(_record(i))
    # While the run goes on (and if it is killed now): three records not written, and why.
    assert read_status(tmp_path) == {"closed": False, "unwritten_records": 3,
                                     "write_error": f"{tmp_path / 'records.jsonl'}: No space left on device"}
    writer.close()
    assert read_status(tmp_path) == {"closed": True, "unwritten_records": 3,
                                     "write_error": f"{tmp_path / 'records.jsonl'}: No space left on device"}
    assert status.stat().st_ino == inode and status.stat().st_size == STATUS_BYTES  # never replaced, never grown


def test_records_written_after_all_are_not_counted_as_unwritten(tmp_path: Path) -> None:
    from loadgen.dispatch.records_status import STATUS_FILE, read_status

    disk = SmallDisk(free=0)
    writer = RecordWriter(tmp_path / "records.jsonl", opener=lambda _: disk, status=tmp_path / STATUS_FILE)
    with pytest.raises(RecordWriteError):
        writer(_record(0))
    disk.free = 10_000  # space came back
    writer.close()
    assert read_status(tmp_path) == {"closed": True, "unwritten_records": 0,
                                     "write_error": f"{tmp_path / 'records.jsonl'}: No space left on device"}
    assert _ids(disk) == [0]


@pytest.mark.parametrize(("status", "run_extra", "expected"), [
    ({"closed": False, "unwritten_records": 0, "write_error": None}, {},
     {"ended_by": "killed or still running: records.jsonl was never closed"}),
    ({"closed": True, "unwritten_records": 8, "write_error": "R: No space left on device"}, {},
     {"unwritten_records": 8, "write_error": "R: No space left on device"}),
    ({"closed": True, "unwritten_records": 8, "write_error": "R: No space left on device"}, {"interrupted": True}, {}),
    (None, {}, {}),
])
def test_report_reads_what_an_unfinished_run_json_lacks(status: dict[str, Any] | None, run_extra: dict[str, Any],
                                                        expected: dict[str, Any]) -> None:
    from loadgen.dispatch.records_status import ended_by

    assert ended_by({"complete": False, **run_extra}, status) == expected
