"""Appends each record to `records.jsonl` the moment its request ends.

Each line goes straight to the kernel (an unbuffered file), so a run killed with SIGKILL keeps every
finished request (only the ones in flight are lost), and `goodput report DIR` can rebuild all outputs
from the file.

A write that fails (disk full, file too large, I/O error) never leaves a cut line behind: the file is
truncated back to the end of the last whole record. The record is kept in memory with any that follow,
every later record retries the write (space may come back), and `close` tries once more; what is still
unwritten then is counted (`unwritten`). The failed call raises `RecordWriteError`, so the runner stops
dispatching; the first error is kept in `error`.

With `status`, that count and the error are also kept in records.status.json (created before the
records file, then only rewritten in place: see loadgen.dispatch.records_status), where a full disk that
stops the final run.json cannot take them away.
"""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import orjson

from loadgen.dispatch.records_status import StatusFile
from metrics.records import RequestRecord


class RawFile(Protocol):
    """What the writer needs of its file: an unbuffered binary file in append mode."""

    def write(self, data: bytes | memoryview, /) -> int | None: ...
    def truncate(self, size: int, /) -> int: ...
    def tell(self) -> int: ...
    def close(self) -> None: ...


class RecordWriteError(OSError):
    """A record could not be written to records.jsonl; it is kept in memory, see RecordWriter."""


def encode_record(record: RequestRecord) -> bytes:
    """`record.to_json()`, byte for byte, without `dataclasses.asdict`: orjson walks the dataclass itself,
    while asdict deep-copies every list element by element (~200 µs for a 64-chunk record instead of ~4)."""
    return orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)


def open_for_append(path: Path) -> RawFile:
    return path.open("ab", buffering=0)


class RecordWriter:
    def __init__(self, path: Path, *, opener: Callable[[Path], RawFile] = open_for_append,
                 status: Path | None = None):
        self.path = path
        self._status = StatusFile(status) if status is not None else None  # first: while there is space
        try:
            self._file: RawFile | None = opener(path)
        except BaseException:
            if self._status is not None:
                self._status.close_fd()
            raise
        self._size = self._file.tell()  # end of the last whole record on disk
        self.written = 0  # records on disk
        self.pending: list[bytes] = []  # records not (yet) on disk, oldest first
        self.error: OSError | None = None  # the first failed write
        self._sealed = False  # a torn line could not be cut off: appending more would bury it mid-file

    @property
    def unwritten(self) -> int:
        return len(self.pending)

    def __call__(self, record: RequestRecord) -> None:
        if self._file is None:
            raise RuntimeError("record writer is closed")
        self.pending.append(encode_record(record))
        self._flush()

    def _flush(self) -> None:
        """Write every pending record, or none: on failure the file is cut back to whole records."""
        assert self._file is not None
        data = memoryview(b"".join(self.pending))
        done = 0
        try:
            if self._sealed:
                raise OSError(errno.EIO, "an earlier failed write could not be cut back")
            while done < len(data):
                n = self._file.write(data[done:])
                if not n:  # a regular file never returns 0 for a non-empty write; do not spin on it
                    raise OSError(errno.EIO, "the write made no progress")
                done += n
        except OSError as exc:
            self._cut_back()
            if self.error is None:  # kept naming the file: a failed write() does not
                self.error = OSError(exc.errno, exc.strerror, str(self.path)) if exc.errno else exc
            self._report()
            raise RecordWriteError(exc.errno, f"cannot write {self.path}: {exc.strerror or exc}") from exc
        self._size += done
        self.written += len(self.pending)
        self.pending.clear()
        if self.error is not None:
            self._report()  # written after all: none unwritten any more

    def _report(self, *, closed: bool = False) -> None:
        if self._status is None:
            return
        error = None
        if self.error is not None:
            reason = self.error.strerror or str(self.error)
            error = f"{self.error.filename}: {reason}" if self.error.filename else reason
        if closed:
            self._status.close(unwritten=self.unwritten, error=error)
        else:
            self._status.update(unwritten=self.unwritten, error=error)

    def _cut_back(self) -> None:
        assert self._file is not None
        try:
            self._file.truncate(self._size)  # shrinking a file needs no free space
        except OSError:
            self._sealed = True  # the torn line stays last, where readers skip it

    def close(self) -> None:
        """Last try for the records still in memory (space may be back), then close."""
        if self._file is None:
            return
        if self.pending:
            with contextlib.suppress(RecordWriteError):  # what stays unwritten is counted in `unwritten`
                self._flush()
        try:
            self._file.close()
        except OSError as exc:
            self.error = self.error or exc
        self._file = None
        self._report(closed=True)
