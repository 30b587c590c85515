"""The bytes between the parent and a local worker process: length-prefixed pickles over its stdin (parent →
worker: the task, then `go` and `stop`) and a private copy of its stdout (worker → parent: ready, batches of
records, finished). Both ends are this program on this host, started by the parent: nothing else reads or
writes these pipes, and nothing of them reaches a file."""

from __future__ import annotations

import os
import pickle
import struct
from dataclasses import dataclass
from typing import Any

HEADER = struct.Struct("!I")


@dataclass(frozen=True, slots=True)
class Ready:
    worker: int


@dataclass(frozen=True, slots=True)
class Failed:
    """The worker could not start (its task could not be built); one line, for the run's error."""

    worker: int
    message: str


@dataclass(frozen=True, slots=True)
class Go:
    anchor_ns: int


@dataclass(frozen=True, slots=True)
class Stop:
    pass


def frame(message: Any) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(data)) + data


def unframe(data: bytes) -> Any:
    return pickle.loads(data)


def read_exact(fd: int, n: int) -> bytes:
    """Blocking read of exactly n bytes; EOFError when the pipe closes first."""
    chunks = []
    while n:
        chunk = os.read(fd, n)
        if not chunk:
            raise EOFError("pipe closed")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int) -> Any:
    (size,) = HEADER.unpack(read_exact(fd, HEADER.size))
    return unframe(read_exact(fd, size))


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
