"""Trace files: each format read and detected, clear errors, the replay schedule, and the prompts that
share exactly the tokens the trace says they share."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from loadgen.spec.sections import LoadSpec
from loadgen.workload.arrivals import Arrival
from loadgen.workload.counters import make_counter
from loadgen.workload.schedule import run_schedule, trace_offsets
from loadgen.workload.trace_workload import TraceWorkload
from loadgen.workload.traces import load_trace
from tests.loadgen._traces import reuse_rows, write_azure, write_burstgpt, write_mooncake


def _trace_load(**kw: object) -> LoadSpec:
    args: dict[str, object] = {"arrival": Arrival("trace"), "requests": None}
    args.update(kw)
    return LoadSpec(**args)  # type: ignore[arg-type]


def test_mooncake_is_read_with_its_blocks_and_times_in_seconds(tmp_path: Path) -> None:
    path = write_mooncake(tmp_path / "t.jsonl", [
        {"timestamp": 0, "input_length": 700, "output_length": 5, "hash_ids": [1, 2]},
        {"timestamp": 2500, "input_length": 100, "output_length": 0, "hash_ids": [1]},
    ])
    trace = load_trace(str(path))
    assert trace.format == "mooncake" and trace.n == 2
    assert trace.arrival_s.tolist() == [0.0, 2.5]
    assert trace.input_tokens.tolist() == [700, 100] and trace.output_tokens.tolist() == [5, 0]
    assert trace.blocks(0).tolist() == [1, 2] and trace.blocks(1).tolist() == [1]  # type: ignore[union-attr]


def test_azure_and_burstgpt_are_detected_and_read(tmp_path: Path) -> None:
    azure = load_trace(str(write_azure(tmp_path / "a.csv", [
        ("2023-11-16 18:15:46.6805900", 374, 44), ("2023-11-16 18:15:50.1805900", 396, 109)])))
    assert azure.format == "azure" and azure.hash_ids is None
    assert azure.arrival_s[1] - azure.arrival_s[0] == pytest.approx(3.5)
    assert azure.input_tokens.tolist() == [374, 396] and azure.output_tokens.tolist() == [44, 109]
    burst = load_trace(str(write_burstgpt(tmp_path / "b.csv", [(5.0, 472, 18), (7.25, 1087, 0)])))
    assert burst.format == "burstgpt" and burst.arrival_s.tolist() == [5.0, 7.25]
    assert burst.output_tokens.tolist() == [18, 1]  # a failed request's 0 response tokens: still one token asked


def test_requests_are_replayed_in_time_order(tmp_path: Path) -> None:
    path = write_mooncake(tmp_path / "t.jsonl", [
        {"timestamp": 900, "input_length": 3, "output_length": 1, "hash_ids": [7]},
        {"timestamp": 100, "input_length": 4, "output_length": 2, "hash_ids": [8, 9]},
    ])
    trace = load_trace(str(path))
    assert trace.arrival_s.tolist() == [0.1, 0.9] and trace.input_tokens.tolist() == [4, 3]
    assert trace.blocks(0).tolist() == [8, 9] and trace.blocks(1).tolist() == [7]  # type: ignore[union-attr]


@pytest.mark.parametrize(("text", "fmt", "needle"), [
    ("a,b,c\n1,2,3\n", "auto", "fits no trace format; columns found: a, b, c"),
    ('{"ts": 1, "len": 3}\n', "auto", "fits no trace format; keys found: len, ts"),
    ("Timestamp,Request tokens\n1,2\n", "burstgpt", "missing column(s) Response tokens; columns found: Timestamp, Request tokens"),
    ("", "auto", "the trace is empty"),
])
def test_a_file_that_fits_no_format_names_what_it_found(tmp_path: Path, text: str, fmt: str, needle: str) -> None:
    path = tmp_path / "t.txt"
    path.write_text(text)
    with pytest.raises(ValueError) as info:
        load_trace(str(path), fmt)
    assert needle in str(info.value)


@pytest.mark.parametrize(("lines", "needle"), [
    (['{"timestamp": 0, "input_length": 5, "output_length": 1}', "{broken"], ":2: not valid JSON"),
    (['{"timestamp": 0, "input_length": 5, "output_length": 1}', '{"timestamp": 1, "input_length": 0, "output_length": 1}'],
     ":2: input_length must be an integer >= 1"),
    (['{"timestamp": 0, "input_length": 5, "output_length": 1}', "", '{"timestamp": 1, "input_length": 5}'],
     ":3: missing output_length"),
    (['{"timestamp": 0, "input_length": 5, "output_length": 1, "hash_ids": [1, -2]}'], ":1: hash_ids must be"),
])
def test_a_malformed_mooncake_line_is_named_by_its_number(tmp_path: Path, lines: list[str], needle: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError) as info:
        load_trace(str(path))
    assert f"{path}{needle}" in str(info.value)


def test_a_malformed_csv_line_is_named_by_its_number(tmp_path: Path) -> None:
    path = write_azure(tmp_path / "a.csv", [("2023-11-16 18:15:46", 10, 2), ("yesterday", 10, 2)])
    with pytest.raises(ValueError, match=r"a\.csv:3: TIMESTAMP is not a date-time"):
        load_trace(str(path))
    path = write_burstgpt(tmp_path / "b.csv", [(1.0, 10, 2)])
    path.write_text(path.read_text() + "2.0,ChatGPT,many,3,4,x\n")
    with pytest.raises(ValueError, match=r"b\.csv:3: Request tokens is not a number"):
        load_trace(str(path))


def test_offsets_follow_the_timestamps_scaled_and_rescaled() -> None:
    arrival = np.array([10.0, 10.5, 10.6, 13.0])
    assert trace_offsets(arrival).tolist() == pytest.approx([0.0, 0.5, 0.6, 3.0])
    assert trace_offsets(arrival, time_scale=2.0).tolist() == pytest.approx([0.0, 0.25, 0.3, 1.5])
    rescaled = trace_offsets(arrival, rate=2.0)  # mean rate 3 / 3 s = 1/s → 2/s: half the gaps, same shape
    assert rescaled.tolist() == pytest.approx([0.0, 0.25, 0.3, 1.5])
    assert (rescaled.size - 1) / rescaled[-1] == pytest.approx(2.0)


def test_window_requests_and_duration_cut_the_trace(tmp_path: Path) -> None:
    path = write_mooncake(tmp_path / "t.jsonl", [
        {"timestamp": t, "input_length": 4, "output_length": 1} for t in (0, 1000, 2000, 3000, 4000, 5000)])
    trace = load_trace(str(path))
    window = run_schedule(_trace_load(trace_start_s=1.0, trace_duration_s=3.0), trace)
    assert window is not None and window.rows is not None
    assert window.rows.tolist() == [1, 2, 3] and window.offsets.tolist() == [0.0, 1.0, 2.0]
    capped = run_schedule(_trace_load(requests=2, time_scale=2.0), trace)
    assert capped is not None and capped.offsets.tolist() == [0.0, 0.5]
    timed = run_schedule(_trace_load(duration_s=2.5), trace)
    assert timed is not None and timed.offsets.tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="no request in the window"):
        run_schedule(_trace_load(trace_start_s=60.0), trace)


def _workload(path: Path, counter: str, **kw: object) -> TraceWorkload:
    trace = load_trace(str(path))
    return TraceWorkload(trace, np.arange(trace.n), 0, make_counter(counter)[1], **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("counter", ["bytes", "words"])
def test_prompts_have_the_trace_lengths_and_share_exactly_their_common_blocks(tmp_path: Path, counter: str) -> None:
    path = write_mooncake(tmp_path / "t.jsonl", [
        {"timestamp": 0, "input_length": 1100, "output_length": 7, "hash_ids": [1, 2, 3]},
        {"timestamp": 1, "input_length": 900, "output_length": 9, "hash_ids": [1, 2]},
        {"timestamp": 2, "input_length": 600, "output_length": 3, "hash_ids": [1, 4]},
        {"timestamp": 3, "input_length": 300, "output_length": 3, "hash_ids": [5]},
    ])
    w = _workload(path, counter)
    count = make_counter(counter)[1]
    items = [w.item(i) for i in range(4)]
    texts = [str(it.prompt) for it in items]
    assert [count(t) for t in texts] == [1100, 900, 600, 300]
    assert [it.max_tokens for it in items] == [7, 9, 3, 3]
    assert [it.prompt_tokens_target for it in items] == [1100, 900, 600, 300]
    unit = 1 if counter == "bytes" else None  # bytes: positions are characters

    def head(text: str, tokens: int) -> str:
        return text[:tokens] if unit else " ".join(text.split()[:tokens])

    assert head(texts[0], 900) == head(texts[1], 900)  # blocks 1, 2 (the second one partial in request 1)
    assert head(texts[0], 512) == head(texts[2], 512) and head(texts[0], 600) != head(texts[2], 600)
    assert head(texts[3], 8) != head(texts[0], 8)
    assert w.item(1) == _workload(path, counter).item(1)  # a function of the seed and the request


def test_blocks_do_not_merge_under_a_tokenizer(tmp_path: Path) -> None:
    from tests.loadgen._tiny_tokenizer import byte_level_bpe

    tok = byte_level_bpe(tmp_path / "tok")
    path = write_mooncake(tmp_path / "t.jsonl", [
        {"timestamp": 0, "input_length": 1024, "output_length": 1, "hash_ids": [1, 2]},
        {"timestamp": 1, "input_length": 1024, "output_length": 1, "hash_ids": [1, 3]},
    ])
    w = _workload(path, str(tok))
    from tokenizers import Tokenizer

    encode = Tokenizer.from_file(str(tok)).encode
    a, b = (encode(str(w.item(i).prompt), add_special_tokens=False).ids for i in range(2))
    assert len(a) == len(b) == 1024
    assert a[:512] == b[:512] and a[512] != b[512]  # the shared block is the same 512 tokens, and no more


def test_a_trace_without_blocks_gets_unique_prompts(tmp_path: Path) -> None:
    path = write_burstgpt(tmp_path / "b.csv", [(0.0, 64, 4), (1.0, 64, 4)])
    w = _workload(path, "bytes")
    a, b = (str(w.item(i).prompt) for i in range(2))
    assert len(a) == len(b) == 64 and a[:4] != b[:4]


def test_reuse_rows_fixture_has_shared_blocks() -> None:
    rows = reuse_rows(20)
    firsts = [r["hash_ids"][0] for r in rows]
    assert len(set(firsts)) < len(firsts)


def test_prompts_sized_by_the_servers_word_table_have_exactly_the_trace_lengths(tmp_path: Path) -> None:
    """With the table a tokenize endpoint teaches (loadgen.workload.sizing), a block cut short at a word once
    left the prompt a few tokens under input_length; the request's own words now make up the difference."""
    from loadgen.workload.text import count_bytes
    from tests.loadgen.test_sizing import byte_table

    rows = [{"timestamp": i, "input_length": n, "output_length": 1, "hash_ids": ids}
            for i, (n, ids) in enumerate([(1100, [1, 2, 3]), (901, [1, 2]), (700, [1, 4]), (37, [5]), (515, [1, 6])])]
    path = write_mooncake(tmp_path / "t.jsonl", rows)
    table = byte_table()  # the reference server's byte tokenizer, as its tokenize endpoint teaches it
    trace = load_trace(str(path))
    w = TraceWorkload(trace, np.arange(trace.n), 0, table)
    texts = [str(w.item(i).prompt) for i in range(trace.n)]
    assert [count_bytes(t) for t in texts] == [r["input_length"] for r in rows]  # the server's own count
    assert [table(t) for t in texts] == [r["input_length"] for r in rows]
    assert texts[0][:512] == texts[1][:512] == texts[2][:512] == texts[4][:512]  # block 1, shared exactly
    assert texts[0][:800] == texts[1][:800]  # block 2, shared as far as the cut one's words reach
