"""Appends each record to `records.jsonl` the moment its request ends.

Each line is flushed to the kernel at once, so a run killed with SIGKILL keeps every finished request
(only the ones in flight are lost), and `goodput report DIR` can rebuild all outputs from the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

from metrics.record import RequestRecord


class RecordWriter:
    def __init__(self, path: Path):
        self.path = path
        self._file: BinaryIO | None = path.open("ab")

    def __call__(self, record: RequestRecord) -> None:
        if self._file is None:
            raise RuntimeError("record writer is closed")
        self._file.write(record.to_json())
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
