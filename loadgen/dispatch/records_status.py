"""records.status.json: what became of records.jsonl, kept where a full disk cannot take it away.

The final run.json is written at the end, atomically, into a new file: on a full disk that write fails,
and with it the count of records that could not be written. So the record writer keeps that count in a
small file of its own, created first (before the first request, while there is space) at a fixed size,
and afterwards only ever rewritten in place, over the bytes it already holds: a rewrite that allocates
nothing, which a full disk does not refuse (on the usual filesystems; where it still fails, the run's
own error line says the count).

    {"closed": false, "unwritten_records": 0, "write_error": null}     (padded with spaces)

`closed` turns true when the writer closed the file at the end of the run; a run whose status never
closed was killed (SIGKILL, a crash, the machine) or is still running. `goodput report` reads it when
run.json was not finished, so a run that ran out of space says so, and how many records it lost.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from metrics.results import RECORDS_STATUS_FILE as STATUS_FILE

if TYPE_CHECKING:
    from metrics.results import JsonObject

STATUS_BYTES = 512
MAX_ERROR_CHARS = 300


def _encode(*, closed: bool, unwritten: int, error: str | None) -> bytes:
    doc = {"closed": closed, "unwritten_records": unwritten,
           "write_error": error[:MAX_ERROR_CHARS] if error is not None else None}
    data = json.dumps(doc).encode("utf-8")[: STATUS_BYTES - 1]
    return data.ljust(STATUS_BYTES - 1) + b"\n"


class StatusFile:
    """The open status file; `update` rewrites it in place (best effort), `close` for the last time."""

    def __init__(self, path: Path):
        self.path = path
        self._fd: int | None = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0),
                                       0o666)
        try:
            self._write(closed=False, unwritten=0, error=None)  # allocated now, while there is space
        except OSError:
            self.close_fd()
            raise

    def _write(self, *, closed: bool, unwritten: int, error: str | None) -> None:
        assert self._fd is not None
        data = _encode(closed=closed, unwritten=unwritten, error=error)
        done = 0
        while done < len(data):
            done += os.pwrite(self._fd, data[done:], done)

    def update(self, *, unwritten: int, error: str | None, closed: bool = False) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):  # the run's error line still says the count
            self._write(closed=closed, unwritten=unwritten, error=error)

    def close(self, *, unwritten: int, error: str | None) -> None:
        self.update(unwritten=unwritten, error=error, closed=True)
        self.close_fd()

    def close_fd(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


class RecordsStatus(TypedDict):
    """records.status.json as read back, checked (a count that is no count reads 0, an error no text None)."""

    closed: bool
    unwritten_records: int
    write_error: str | None


class EndedBy(TypedDict, total=False):
    """The fields `ended_by` adds to an unfinished run.json."""

    unwritten_records: int
    write_error: str
    ended_by: str


def read_status(run_dir: Path) -> RecordsStatus | None:
    """The status a run left (None: none, as for runs before it existed, or not readable as one)."""
    try:
        doc = json.loads((run_dir / STATUS_FILE).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("closed"), bool):
        return None
    unwritten = doc.get("unwritten_records")
    error = doc.get("write_error")
    return {"closed": doc["closed"],
            "unwritten_records": unwritten if isinstance(unwritten, int) and unwritten >= 0 else 0,
            "write_error": error if isinstance(error, str) else None}


def ended_by(run: JsonObject, status: RecordsStatus | None) -> EndedBy:
    """What `goodput report` adds to a run.json that was never finished (no `interrupted` field: the run
    did not get to write its final run.json), from the status the record writer left: the records it
    could not write and why, or that it never closed its records (killed, or still running)."""
    if status is None or "interrupted" in run:
        return {}
    added: EndedBy = {}
    if status["unwritten_records"] and not run.get("unwritten_records"):
        added["unwritten_records"] = status["unwritten_records"]
    if status["write_error"] and not run.get("write_error"):
        added["write_error"] = status["write_error"]
    if not status["closed"]:
        added["ended_by"] = "killed or still running: records.jsonl was never closed"
    elif not (added.get("write_error") or run.get("write_error")):
        added["ended_by"] = "its final run.json was never written"
    return added
