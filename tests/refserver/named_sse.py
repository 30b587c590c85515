"""Reading the Responses and Messages APIs' streams in the tests: raw SSE, parsed here with no client code.

Each event is an `event: NAME` line and a `data: JSON` line, then a blank line; `read_stream` also stamps
each event with the client's `time.perf_counter()` when its data line arrived, relative to the send.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import httpx


@dataclass(slots=True)
class Event:
    name: str
    data: dict[str, Any]
    client_s: float = 0.0  # client seconds from the send to this event's data line


def parse_named(body: str) -> list[Event]:
    """Every event of an SSE body; fails the test on a block that is not exactly `event:` + `data:`."""
    events: list[Event] = []
    assert body.endswith("\n\n"), body[-200:]
    for block in body.split("\n\n")[:-1]:
        lines = block.split("\n")
        assert len(lines) == 2 and lines[0].startswith("event: ") and lines[1].startswith("data: "), block
        events.append(Event(lines[0][len("event: "):], json.loads(lines[1][len("data: "):])))
    return events


def read_stream(url: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> list[Event]:
    """POST `body` with stream on; the events with the client's arrival stamps."""
    events: list[Event] = []
    name = None
    with httpx.Client(timeout=30.0) as client:
        sent = time.perf_counter()
        with client.stream("POST", url, json={**body, "stream": True}, headers=headers) as response:
            assert response.status_code == 200, response.read()
            assert response.headers["content-type"].startswith("text/event-stream")
            for line in response.iter_lines():
                if line.startswith("event: "):
                    name = line[len("event: "):]
                elif line.startswith("data: "):
                    assert name is not None, line
                    events.append(Event(name, json.loads(line[len("data: "):]), time.perf_counter() - sent))
                    name = None
                else:
                    assert line == "", line
    return events


def post(url: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.post(url, json=body, headers=headers, timeout=30.0)
