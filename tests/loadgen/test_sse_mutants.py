"""The SSE parser's edges that mutation testing found unguarded (bench/mutate.py, docs/testing.md).

Expected values come from the WHATWG event-stream rules and from the parser's documented budget: an
event's size is the sum over its data lines of the line's bytes plus one (the LF that joins or ends
it), and `max_event_bytes` is the largest size accepted.
"""

from __future__ import annotations

import pytest

from loadgen.http.sse import SSEError, SSEEvent, SSEEventTooLarge, SSEParser

_BOM = b"\xef\xbb\xbf"


def parse(*reads: bytes, max_event_bytes: int = 1 << 20) -> list[SSEEvent]:
    parser = SSEParser(max_event_bytes=max_event_bytes)
    events: list[SSEEvent] = []
    for read in reads:
        events.extend(parser.feed(read))
    events.extend(parser.close())
    return events


def test_a_budget_of_one_byte_is_allowed_and_zero_is_refused_with_its_value() -> None:
    assert parse(b"data\n\n", max_event_bytes=1) == [SSEEvent(b"")]  # one empty line: 0 + 1 bytes
    with pytest.raises(ValueError, match=r"^max_event_bytes must be positive, got 0$"):
        SSEParser(max_event_bytes=0)


@pytest.mark.parametrize("read", [b"data: abc\n\n", b"data:abc\n\n"])  # the one-line read, then the general path
def test_an_event_of_exactly_the_budget_passes_and_one_byte_less_refuses_it(read: bytes) -> None:
    assert parse(read, max_event_bytes=4) == [SSEEvent(b"abc")]  # 3 bytes + 1
    with pytest.raises(SSEEventTooLarge, match=r"^an SSE event exceeds 3 bytes$"):
        parse(read, max_event_bytes=3)


def test_the_second_event_starts_with_a_fresh_budget() -> None:
    assert parse(b"data:abc\n\ndata:abc\n\n", max_event_bytes=4) == [SSEEvent(b"abc"), SSEEvent(b"abc")]


def test_a_bare_data_line_costs_one_byte_of_the_budget() -> None:
    stream = b"data:a\ndata\ndata:abc\n\n"  # (1 + 1) + (0 + 1) + (3 + 1) = 7 bytes
    assert parse(stream, max_event_bytes=7) == [SSEEvent(b"a\n\nabc")]
    with pytest.raises(SSEEventTooLarge):
        parse(stream, max_event_bytes=6)


def test_an_unterminated_line_of_exactly_the_budget_waits_for_its_end() -> None:
    parser = SSEParser(max_event_bytes=8)
    assert parser.feed(b"data:abc") == []  # 8 bytes, no line end yet
    assert parser.feed(b"\n\n") == [SSEEvent(b"abc")]
    longer = SSEParser(max_event_bytes=8)
    with pytest.raises(SSEEventTooLarge, match=r"^an SSE line exceeds 8 bytes without a line end$"):
        longer.feed(b"data:abcd")


def test_fields_set_in_an_earlier_read_reach_a_one_line_event_then_reset() -> None:
    parser = SSEParser()
    assert parser.feed(b"event: delta\nid: 7\nretry: 300\n") == []
    assert parser.feed(b"data: a\n\n") == [SSEEvent(b"a", "delta", "7", 300)]
    assert parser.feed(b"data: b\n\n") == [SSEEvent(b"b", None, "7", None)]  # the id persists (spec)


def test_a_read_that_continues_a_buffered_line_is_not_a_one_line_event() -> None:
    assert parse(b"data: a", b"data: b\n\n") == [SSEEvent(b"adata: b")]


def test_a_blank_line_after_the_event_is_not_part_of_its_data() -> None:
    assert parse(b"data: a\n\n\n") == [SSEEvent(b"a")]


def test_a_bom_is_skipped_only_at_the_start_of_the_stream() -> None:
    parser = SSEParser()
    assert parser.feed(_BOM) == []
    assert not parser.has_partial_event  # the whole BOM came: nothing is pending
    assert parser.close() == []
    later = SSEParser()
    assert later.feed(b"data: a\n\n") == [SSEEvent(b"a")]
    with pytest.raises(SSEError, match="not an SSE field"):  # a BOM later is part of a field name
        later.feed(_BOM + b"data: b\n\n")


def test_a_first_read_shorter_than_a_bom_is_parsed_at_once() -> None:
    parser = SSEParser()
    assert parser.feed(b":\n") == []
    assert not parser.has_partial_event  # a comment line, complete: nothing buffered
    with pytest.raises(SSEError):
        SSEParser().feed(b"x\n")  # an unknown field is refused at once, not held as a possible BOM


def test_close_drops_the_unfinished_event_and_leaves_nothing_pending() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a") == []
    assert parser.has_partial_event
    assert parser.close() == []
    assert not parser.has_partial_event


def test_field_values_split_at_the_first_colon_with_one_optional_space() -> None:
    assert parse(b"event: a:b\ndata: x\n\n") == [SSEEvent(b"x", "a:b")]
    assert parse(b"event:ab\ndata: x\n\n") == [SSEEvent(b"x", "ab")]
    assert parse(b"id:42\ndata: x\n\n") == [SSEEvent(b"x", None, "42")]


def test_a_field_without_a_colon_has_an_empty_value() -> None:
    assert parse(b"event\ndata: x\n\n") == [SSEEvent(b"x", "")]
    assert parse(b"id: 5\ndata: x\n\nid\ndata: y\n\n") == [SSEEvent(b"x", None, "5"), SSEEvent(b"y", None, "")]


def test_invalid_utf8_in_event_and_id_becomes_the_replacement_character() -> None:
    events = parse(b"event: a\xffb\nid: 1\xfe\ndata: x\n\n")
    assert events == [SSEEvent(b"x", "a\ufffdb", "1\ufffd")]


def test_a_strict_error_quotes_the_first_80_bytes_of_the_line() -> None:
    line = b"\xff" + b"z" * 100
    shown = "\ufffd" + "z" * 79
    with pytest.raises(SSEError) as caught:
        parse(line + b"\n\n")
    assert str(caught.value) == f"not an SSE field or comment: {shown!r}"
