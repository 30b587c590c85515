"""Property tests of the SSE parser: any stream, cut anywhere, parses to the same events."""

from __future__ import annotations

import pytest

pytest.importorskip("hypothesis")

from hypothesis import given, settings
from hypothesis import strategies as st

from loadgen.http.sse import SSEEvent, SSEParser


def parse(*reads: bytes) -> list[SSEEvent]:
    parser = SSEParser()
    events = [e for r in reads for e in parser.feed(r)]
    return events + parser.close()


_values = st.binary(max_size=20).filter(lambda b: b"\n" not in b and b"\r" not in b)


@st.composite
def _streams(draw: st.DrawFn) -> tuple[bytes, list[bytes]]:
    """A random well-formed stream plus the data of its events, mixing line endings per line."""
    # CR-only streams are drawn whole: a CR followed by an LF-ended line would read as one CRLF.
    ends = st.just(b"\r") if draw(st.booleans()) else st.sampled_from([b"\n", b"\r\n"])
    out, expected = b"", []
    for _ in range(draw(st.integers(0, 6))):
        lines = draw(st.lists(_values, min_size=1, max_size=3))
        for value in lines:
            if draw(st.booleans()):
                out += b": note" + draw(ends)
            out += b"data: " + value + draw(ends)
        out += draw(ends)
        expected.append(b"\n".join(lines))
    return out, expected


@given(_streams(), st.lists(st.integers(0, 10_000), max_size=8))
@settings(max_examples=300, deadline=None)
def test_property_random_streams_any_cuts(stream: tuple[bytes, list[bytes]], raw_cuts: list[int]) -> None:
    data, expected = stream
    cuts = sorted({c % (len(data) + 1) for c in raw_cuts})
    pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
    assert [e.data for e in parse(*pieces)] == expected


_events = st.lists(st.lists(_values, min_size=1, max_size=3), min_size=1, max_size=5)


@given(_events)
@settings(max_examples=200, deadline=None, derandomize=True)
def test_property_one_read_per_event(events: list[list[bytes]]) -> None:
    """Each event arrives in a read of its own (what a server flushing per event produces): the data lines
    of an event are joined with LF, whatever the number of lines. Derandomized: the same examples every
    run, so a fault in the one-read path fails every time, not in some seeds."""
    reads = [b"".join(b"data: " + v + b"\n" for v in lines) + b"\n" for lines in events]
    assert [e.data for e in parse(*reads)] == [b"\n".join(lines) for lines in events]
