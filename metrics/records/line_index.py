"""Where the lines of a records.jsonl lie, found by numpy a block at a time (no Python pass over the lines).

Arrow's JSON reader says nothing about which line a row came from, and it silently skips blank lines and
makes two rows of a line holding two objects. Knowing every line's place lets the Arrow reader check
that its rows are the file's non-blank lines one for one, and name the line of a row it cannot use.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from metrics.records.record_check import BLANK, decode, is_blank

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

_STEP = 1 << 20  # bytes read and compared at a time: the block and its mask stay in cache
_LEADING_BLANK = np.frombuffer(BLANK, dtype=np.uint8)


@dataclass(slots=True)
class LineIndex:
    starts: IntArray  # offset of each line's first byte
    ends: IntArray  # offset just past each line's last byte, its newline left out
    blank: BoolArray
    size: int  # of the file
    torn: bool  # the last line has no newline and is not JSON: a write cut short

    @property
    def lines(self) -> int:
        return int(self.starts.shape[0])

    @property
    def terminated(self) -> bool:
        """The file is empty or ends with a newline."""
        return self.lines == 0 or int(self.ends[-1]) < self.size

    def record_lines(self) -> IntArray:
        """1-based numbers of the lines a JSON reader makes rows from: neither blank nor torn."""
        keep = ~self.blank
        if self.torn:
            keep[-1] = False
        return np.flatnonzero(keep) + 1

    def read(self, path: Path, numbers: IntArray) -> Iterator[bytes]:
        """The bytes of the given lines (1-based), newline left out."""
        with path.open("rb") as f:
            for number in numbers.tolist():
                f.seek(int(self.starts[number - 1]))
                yield f.read(int(self.ends[number - 1] - self.starts[number - 1]))


def index_lines(path: Path) -> LineIndex:
    raw = bytearray(_STEP)
    buf = np.frombuffer(raw, dtype=np.uint8)  # a view: what readinto puts in `raw`, numpy sees
    newlines: list[IntArray] = []
    firsts: list[npt.NDArray[np.uint8]] = []  # the first byte of each line, in order
    at, line_starts_here = 0, True  # the file's first byte starts a line
    with path.open("rb", buffering=0) as f:
        while n := f.readinto(raw):
            block = buf[:n]
            if line_starts_here:
                firsts.append(block[:1].copy())
            local = np.flatnonzero(block == ord("\n"))
            newlines.append(local + at)
            firsts.append(block[local[local + 1 < n] + 1])
            line_starts_here = bool(local.size) and int(local[-1]) == n - 1
            at += n
        size = at
        ends = np.concatenate([*newlines, np.zeros(0, dtype=np.int64)]).astype(np.int64)
        starts = np.concatenate(([0], ends + 1)).astype(np.int64)
        if size == 0 or starts[-1] == size:  # nothing after the last newline
            starts = starts[:-1]
        else:
            ends = np.concatenate((ends, [size])).astype(np.int64)
        first = np.concatenate([*firsts, np.zeros(0, dtype=np.uint8)])
        # Only an empty line or one led by a space, tab or CR can be blank: read those alone.
        blank = ends == starts
        for i in np.flatnonzero(~blank & np.isin(first, _LEADING_BLANK)).tolist():
            f.seek(int(starts[i]))
            blank[i] = is_blank(f.read(int(ends[i] - starts[i])))
        torn = False
        if size and int(ends[-1]) == size and not blank[-1]:
            f.seek(int(starts[-1]))
            try:
                decode(f.read())
            except ValueError:
                torn = True
    return LineIndex(starts, ends, blank, size, torn)
