"""The API-neutral event accumulator, event by event, against hand-written decoded streams (docs/formats.md,
the Responses and Messages streams; docs/metrics.md, content chunks). A decoder that reads its `(kind,
value)` pairs straight from the event's JSON stands in for an API's: each expected chunk, position and
stamp is counted from the events written out in the test."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from loadgen.http.api.events import (
    END,
    ERROR,
    FINISH,
    REASONING,
    TEXT,
    TOOL_ARGS,
    TOOL_DONE,
    TOOL_START,
    USAGE,
    Decoded,
    EventAccumulator,
)
from loadgen.http.errors import InvalidJSON, InvalidUTF8, MidStreamError
from metrics.records.record import RequestRecord


def scripted(obj: dict[str, Any]) -> Decoded:
    """`{"ev": [[kind, value], ...]}` → those pairs; a key missing from the event raises as a real decoder's."""
    return tuple((kind, value) for kind, value in obj["ev"])


def accumulator() -> EventAccumulator:
    return EventAccumulator(scripted, "the end event")


def feed(acc: EventAccumulator, *events: list[list[Any]], start_ns: int = 100) -> list[bool]:
    """Each event's pairs fed at start_ns, start_ns + 10, ...; the ended flags."""
    return [acc.feed(orjson.dumps({"ev": ev}), start_ns + 10 * i) for i, ev in enumerate(events)]


def filled(acc: EventAccumulator) -> RequestRecord:
    record = RequestRecord(id=0, intended_ns=0, sent_ns=0)
    acc.fill(record)
    return record


def test_the_cut_off_message_names_the_terminal_event() -> None:
    acc = accumulator()
    assert acc.terminal == "the end event"
    assert acc.cut_off() == "stream ended before the end event"


def test_text_and_reasoning_are_chunks_with_their_times_and_positions() -> None:
    acc = accumulator()
    ended = feed(acc, [[REASONING, "Let"]], [[REASONING, " me"]], [], [[TEXT, "Hi"]], [[TEXT, "!"], [END, None]])
    assert ended == [False, False, False, False, True]
    assert acc.done is True
    assert acc.chunk_ns == [100, 110, 130, 140]  # the empty event at 120 is no chunk
    assert acc.texts == ["Let", " me", "Hi", "!"]
    assert acc.reasoning_at == [0, 1]
    assert acc.empty_at == [] and acc.tool_at == [] and acc.calls == []
    assert acc.content_text() == "Hi!"
    record = filled(acc)
    assert (record.reasoning_ns, record.answer_ns) == (100, 130)


def test_an_empty_text_is_an_empty_token_event_at_its_position_and_the_rest_of_the_event_still_counts() -> None:
    acc = accumulator()
    feed(acc, [[TEXT, "a"]], [[TEXT, ""], [TEXT, "b"]], [[REASONING, ""], [REASONING, "c"], [END, None]])
    assert acc.empty_at == [1, 2]  # each before the chunk that followed it in the same event
    assert acc.chunk_ns == [100, 110, 120]
    assert acc.texts == ["a", "b", "c"]
    assert acc.reasoning_at == [2]  # the empty reasoning piece is no reasoning chunk
    assert acc.done is True


def test_a_tool_call_starts_a_chunk_and_its_arguments_are_chunks_of_the_same_call() -> None:
    acc = accumulator()
    feed(acc, [[TEXT, "ok"]], [[TOOL_START, ["c1", "get"]]], [[TOOL_ARGS, '{"a"']], [[TOOL_ARGS, ""]],
         [[TOOL_ARGS, ": 1}"], [TOOL_DONE, None]], [[TOOL_START, [None, None]], [TOOL_ARGS, "{}"]],
         [[TOOL_DONE, None], [FINISH, "tool_calls"], [END, None]])
    assert acc.tool_calls == 2
    assert acc.calls == [
        {"id": "c1", "type": "function", "function": {"name": "get", "arguments": '{"a": 1}'}},
        {"id": "call_1", "type": "function", "function": {"name": "", "arguments": "{}"}}]
    # the empty argument piece (130) is no chunk; the call begun with its arguments (150) is one chunk
    assert acc.chunk_ns == [100, 110, 120, 140, 150]
    assert acc.tool_at == [1, 2, 3, 4]
    assert acc.texts == ["ok", None, None, None, None]
    assert acc.empty_at == []
    assert acc.tool_done_ns == 140  # the first call's done; the second's (160) does not move it
    assert acc.finish_reason == "tool_calls"
    record = filled(acc)
    assert (record.tool_calls, record.tool_call_ns, record.tool_call_done_ns) == (2, 110, 140)
    assert record.answer_ns == 100 and record.reasoning_ns is None


def test_an_empty_argument_piece_skips_only_itself() -> None:
    acc = accumulator()
    feed(acc, [[TOOL_START, ["c", "f"]], [TOOL_ARGS, ""], [TOOL_ARGS, "{}"], [END, None]])
    assert acc.calls[0]["function"]["arguments"] == "{}"
    assert acc.tool_at == [0] and acc.chunk_ns == [100] and acc.done is True  # one event, one chunk


def test_arguments_without_a_started_call_are_a_chunk_of_no_call() -> None:
    acc = accumulator()
    feed(acc, [[TOOL_ARGS, "{}"]], [[TOOL_DONE, None]])
    assert acc.calls == [] and acc.tool_calls == 0
    assert acc.tool_at == [0] and acc.chunk_ns == [100] and acc.texts == [None]
    assert acc.tool_done_ns is None  # no call was begun: nothing to close


def test_usage_pieces_merge_and_the_last_word_wins() -> None:
    acc = accumulator()
    feed(acc, [[USAGE, {"prompt_tokens": 7}]], [[TEXT, "abcd"]],
         [[USAGE, {"completion_tokens": 4, "prompt_tokens": 9}], [FINISH, "length"], [END, None]])
    assert acc.usage == {"prompt_tokens": 9, "completion_tokens": 4}
    assert acc.finish_reason == "length"
    record = filled(acc)
    assert (record.prompt_tokens, record.output_tokens, record.output_tokens_estimated) == (9, 4, False)


def test_the_finish_is_kept_as_text() -> None:
    acc = accumulator()
    feed(acc, [[FINISH, 3]])
    assert acc.finish_reason == "3" and acc.done is False


def test_an_error_pair_raises_with_the_servers_words() -> None:
    acc = accumulator()
    with pytest.raises(MidStreamError) as caught:
        feed(acc, [[TEXT, "a"]], [[ERROR, {"type": "overloaded_error", "message": "Overloaded"}]])
    assert str(caught.value) == "overloaded_error: Overloaded"
    with pytest.raises(MidStreamError) as plain:
        feed(accumulator(), [[ERROR, "engine died"]])
    assert str(plain.value) == "engine died"


def test_the_end_stops_nothing_in_its_own_event_but_says_the_stream_ended() -> None:
    acc = accumulator()
    assert feed(acc, [[END, None], [FINISH, "stop"]]) == [True]
    assert acc.done is True and acc.finish_reason == "stop"


def test_undecodable_and_non_object_data_are_named_errors() -> None:
    with pytest.raises(InvalidUTF8) as utf:
        accumulator().feed(b'{"a": "\xff"}', 0)
    assert str(utf.value) == "event data is not UTF-8 (invalid start byte at byte 7)"
    with pytest.raises(InvalidJSON) as bad:
        accumulator().feed(b"{nope", 0)
    # the parser's own reason, at the byte after the brace (line 1, column 2)
    assert str(bad.value).startswith("event data is not JSON (") and str(bad.value).endswith("'{nope'")
    assert "line 1 column 2 (char 1)): '{nope'" in str(bad.value)
    with pytest.raises(InvalidJSON) as listed:
        accumulator().feed(b"[" + b"1," * 60 + b"1]", 0)
    assert str(listed.value) == "event data is not a JSON object: " + repr((b"[" + b"1," * 60)[:80])


@pytest.mark.parametrize(("data", "fault"), [
    (b'{"other": 1}', "KeyError: 'ev'"),  # the decoder's missing key
    (b'{"ev": 5}', "TypeError: 'int' object is not iterable"),
    (b'{"ev": [["text"]]}', "ValueError: not enough values to unpack (expected 2, got 1)"),
    (b'{"ev": [["tool_start", "x"]]}', "ValueError: not enough values to unpack (expected 2, got 1)"),
])
def test_a_decoder_or_pair_of_another_shape_is_invalid_json_naming_the_fault(data: bytes, fault: str) -> None:
    with pytest.raises(InvalidJSON) as caught:
        accumulator().feed(data, 0)
    assert str(caught.value) == f"unexpected event shape ({fault}): {data!r}"


@pytest.mark.parametrize("error", [AttributeError("a"), IndexError("i"), KeyError("k"), TypeError("t"), ValueError("v")])
def test_every_shape_fault_of_a_decoder_is_invalid_json(error: Exception) -> None:
    def decode(_obj: dict[str, Any]) -> Decoded:
        raise error

    with pytest.raises(InvalidJSON, match=f"^unexpected event shape \\({type(error).__name__}: "):
        EventAccumulator(decode, "x").feed(b"{}", 0)


def test_a_long_events_message_quotes_its_first_80_bytes() -> None:
    data = b'{"other": "' + b"z" * 100 + b'"}'
    with pytest.raises(InvalidJSON) as caught:
        accumulator().feed(data, 0)
    assert str(caught.value).endswith(": " + repr(data[:80]))


def test_the_reference_servers_stamp_counts_for_content_events_and_carries_over_others() -> None:
    acc = accumulator()
    events = [{"ev": [[TEXT, "ab"]], "goodput": {"t": 0.5, "n": 2}},
              {"ev": [], "goodput": {"t": 0.6, "n": 1}},  # no content: its token joins the next chunk
              {"ev": [[TEXT, "c"]], "goodput": {"t": 0.7, "n": 1}},
              {"ev": [[TEXT, "d"]], "goodput": {}},  # an empty stamp is no stamp
              {"ev": [[END, None]], "goodput": ["not", "a", "dict"]}]
    for i, event in enumerate(events):
        acc.feed(orjson.dumps(event), i)
    assert acc.server_s == [0.5, 0.7]
    assert acc.server_tokens == [2, 2]
    assert acc.goodput_final is None


def test_a_stamp_with_final_figures_is_kept_and_all_stamped_chunks_count_as_the_servers() -> None:
    acc = accumulator()
    acc.feed(orjson.dumps({"ev": [[TEXT, "ab"]], "goodput": {"t": 0.5, "n": 3}}), 1)
    acc.feed(orjson.dumps({"ev": [[TEXT, "c"], [END, None]], "goodput": {"t": 0.7, "n": 1, "queue_s": 0.25}}), 2)
    record = filled(acc)
    assert record.token_source == "server" and record.chunk_tokens == [3, 1]
    assert record.server_chunk_s == [0.5, 0.7] and record.server == {"queue_s": 0.25}
