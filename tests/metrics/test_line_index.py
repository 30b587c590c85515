"""The line index agrees with reading the file line by line, whatever the block size cuts through."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from metrics.records import line_index
from metrics.records.record_check import is_blank

PIECES = [b"{}", b'{"id": 1}', b"", b" ", b"\t", b"\r", b"  {}", b"garbage", b'{"id": 2, "in', b"null"]


def expected(data: bytes) -> tuple[list[int], list[int], list[bool]]:
    starts, ends, blank, at = [], [], [], 0
    for raw in _lines(data):
        content = raw[:-1] if raw.endswith(b"\n") else raw
        starts.append(at)
        ends.append(at + len(content))
        blank.append(is_blank(content))
        at += len(raw)
    return starts, ends, blank


def _lines(data: bytes) -> list[bytes]:
    """The file's lines, each with its newline but perhaps the last (splitlines would also split on CR)."""
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    return lines + ([parts[-1]] if parts[-1] else [])


@pytest.mark.parametrize("step", [1, 2, 3, 7, 64])
def test_index_matches_the_lines_for_any_block_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: int) -> None:
    monkeypatch.setattr(line_index, "_STEP", step)
    rng = random.Random(step)
    path = tmp_path / "records.jsonl"
    for _ in range(40):
        pieces = [rng.choice(PIECES) for _ in range(rng.randint(0, 8))]
        data = b"\n".join(pieces) + rng.choice([b"", b"\n"])
        path.write_bytes(data)
        index = line_index.index_lines(path)
        starts, ends, blank = expected(data)
        assert (index.starts.tolist(), index.ends.tolist(), index.blank.tolist()) == (starts, ends, blank), data
        last = _lines(data)[-1] if data else b"\n"
        assert index.torn == (not last.endswith(b"\n") and last in (b'{"id": 2, "in', b"garbage")), data
        assert index.terminated == (not data or data.endswith(b"\n")), data
