from __future__ import annotations

import random

import pytest

from loadgen.http.sse import SSEError, SSEEvent, SSEEventTooLarge, SSEParser


def parse(*reads: bytes, strict: bool = True) -> list[SSEEvent]:
    parser = SSEParser(strict=strict)
    events: list[SSEEvent] = []
    for r in reads:
        events.extend(parser.feed(r))
    events.extend(parser.close())
    return events


def datas(events: list[SSEEvent]) -> list[bytes]:
    return [e.data for e in events]


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_line_endings(eol: bytes) -> None:
    stream = b"data: a" + eol + eol + b"data: b" + eol + b"data: c" + eol + eol
    assert datas(parse(stream)) == [b"a", b"b\nc"]


def test_multiline_data_joined_with_lf_and_optional_space() -> None:
    events = parse(b"data:x\ndata:  y\ndata\ndata:\n\n")
    assert datas(events) == [b"x\n y\n\n"]


def test_comments_ignored_and_fields_kept() -> None:
    events = parse(b": keep-alive\nevent: delta\nid: 7\nretry: 1500\ndata: {}\n\n: bye\n\n")
    assert events == [SSEEvent(b"{}", "delta", "7", 1500)]


def test_event_type_resets_after_dispatch_but_id_persists() -> None:
    events = parse(b"event: a\nid: 1\ndata: x\n\ndata: y\n\n")
    assert [(e.event, e.id) for e in events] == [("a", "1"), (None, "1")]


def test_invalid_retry_and_nul_id_ignored() -> None:
    events = parse(b"retry: 1s\nid: a\0b\ndata: x\n\n")
    assert events == [SSEEvent(b"x", None, None, None)]


def test_block_without_data_is_not_dispatched() -> None:
    assert parse(b"event: ping\n\n: comment\n\n\n\n") == []


def test_several_events_in_one_read_and_one_event_over_many_reads() -> None:
    assert datas(parse(b"data: 1\n\ndata: 2\n\ndata: 3\n\n")) == [b"1", b"2", b"3"]
    assert datas(parse(b"da", b"ta: he", b"llo\n", b"\n")) == [b"hello"]


def test_crlf_split_across_reads_is_one_line_end() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\r") == []
    assert parser.feed(b"\n\r") == [SSEEvent(b"a")]  # lone CR ends the blank line at once
    assert parser.feed(b"\ndata: b\r\n\r\n") == [SSEEvent(b"b")]


def test_event_dispatched_as_soon_as_its_blank_line_arrives() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\n") == []
    assert parser.feed(b"\n") == [SSEEvent(b"a")]


def test_bom_skipped_only_at_start() -> None:
    assert datas(parse(b"\xef\xbb", b"\xbfdata: a\n\n")) == [b"a"]
    with pytest.raises(SSEError):
        parse(b"data: a\n\n\xef\xbb\xbfdata: b\n\n")


def test_unterminated_event_at_close_is_dropped() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\n\ndata: partial") == [SSEEvent(b"a")]
    assert parser.has_partial_event
    assert parser.close() == []


def test_strict_rejects_non_field_lines() -> None:
    with pytest.raises(SSEError, match="not an SSE field"):
        parse(b'{"choices": []}\n\n')
    assert parse(b'{"choices": []}\ndata: x\n\n', strict=False) == [SSEEvent(b"x")]


def test_events_before_a_fault_are_returned_then_the_fault_raised() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\n\nbogus line\n\n") == [SSEEvent(b"a")]
    assert isinstance(parser.error, SSEError)
    with pytest.raises(SSEError):
        parser.feed(b"data: b\n\n")
    with pytest.raises(SSEError):
        parser.close()


def test_size_limits() -> None:
    parser = SSEParser(max_event_bytes=100)
    with pytest.raises(SSEEventTooLarge):
        parser.feed(b"data: " + b"x" * 200)  # one unterminated line
    parser = SSEParser(max_event_bytes=100)
    with pytest.raises(SSEEventTooLarge):
        parser.feed(b"data: " + b"x" * 60 + b"\n" + b"data: " + b"y" * 60 + b"\n")  # lines summed
    parser = SSEParser(max_event_bytes=100)
    assert parser.feed(b"data: " + b"x" * 90 + b"\n\n") == [SSEEvent(b"x" * 90)]
    with pytest.raises(ValueError):
        SSEParser(max_event_bytes=0)


def test_large_event_passes_under_default_limit() -> None:
    big = b"y" * (1 << 20)
    assert datas(parse(b"data: " + big[:300_000], big[300_000:] + b"\n\n")) == [big]


STREAM = (
    b"\xef\xbb\xbf: hello\r\n"
    b'event: message\r\nid: 1\r\ndata: {"a": 1}\r\n\r\n'
    b"data: line one\rdata: line two\r\r"
    b"data:no-space\n\n"
    b"retry: 10\ndata\n\n"
    b": comment\r\n"
    b"data: [DONE]\r\n\r\n"
)


def _expected() -> list[SSEEvent]:
    return parse(STREAM)


def test_reference_stream_parses_as_specified() -> None:
    assert _expected() == [
        SSEEvent(b'{"a": 1}', "message", "1", None),
        SSEEvent(b"line one\nline two", None, "1", None),
        SSEEvent(b"no-space", None, "1", None),
        SSEEvent(b"", None, "1", 10),
        SSEEvent(b"[DONE]", None, "1", None),
    ]


def test_every_single_cut_position_gives_the_same_events() -> None:
    expected = _expected()
    for cut in range(len(STREAM) + 1):
        assert parse(STREAM[:cut], STREAM[cut:]) == expected, cut


def test_every_pair_of_cut_positions_gives_the_same_events() -> None:
    expected = _expected()
    n = len(STREAM)
    for i in range(n + 1):
        for j in range(i, n + 1):
            assert parse(STREAM[:i], STREAM[i:j], STREAM[j:]) == expected, (i, j)


def test_byte_by_byte_and_random_splits() -> None:
    expected = _expected()
    assert parse(*(STREAM[i : i + 1] for i in range(len(STREAM)))) == expected
    rng = random.Random(1234)
    for _ in range(500):
        cuts = sorted(rng.sample(range(len(STREAM) + 1), rng.randint(1, 12)))
        pieces = [STREAM[a:b] for a, b in zip([0, *cuts], [*cuts, len(STREAM)], strict=True)]
        assert parse(*pieces) == expected, cuts


@pytest.mark.parametrize("reads", [
    [b"data: a\ndata: b\n\n"],  # one read, nothing before: the read the fast path looks at
    [b"data: z\n\n", b"data: a\ndata: b\n\n"],  # after a whole event
    [b"event: x\n", b"data: a\ndata: b\n\n"],  # after a field line: nothing buffered, no data pending
    [b"data: a\n", b"data: b\n\n"],  # split at the line end
    [b"data: a\ndata: ", b"b\n\n"],  # split inside the second line
    [b"data: a\ndata: b\n", b"\n"],  # the blank line on its own
])
def test_two_data_lines_are_one_event_joined_with_lf(reads: list[bytes]) -> None:
    # WHATWG: each `data:` line appends its value and an LF to the buffer; dispatch drops the final LF.
    got = datas(parse(*reads))
    assert got[-1] == b"a\nb" and got[-1].count(b"\n") == 1
    assert b"data" not in got[-1]


def test_one_read_with_three_data_lines_and_a_single_line_event() -> None:
    assert datas(parse(b"data: 1\ndata: 2\ndata: 3\n\n", b"data: {\"x\": 1}\n\n")) == [b"1\n2\n3", b'{"x": 1}']
