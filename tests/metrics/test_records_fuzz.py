"""Whatever records.jsonl holds, reading it ends in a result, never a traceback: the line reader accounts for
every line, the Arrow reader either agrees with it or declines (ArrowException, and the line reader reads
the file instead), and `goodput report` ends with exit 0, 1 (damage) or 2, with its lines on stderr.

The files are built from valid records, each perhaps mutated: a field replaced by any JSON value, a
field removed, the line cut, doubled, re-typed, or replaced by arbitrary bytes. Derandomized, so a run is
a verdict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loadgen.cli import run_cli
from metrics.records.frame_arrow import frame_from_table, read_records_checked
from metrics.records.jsonl import read_jsonl_frame
from tests.metrics._frames import assert_same_frame

FIELDS = ("id", "intended_ns", "sent_ns", "status", "error_kind", "chunk_ns", "chunk_tokens", "token_source",
          "output_tokens", "output_tokens_estimated", "prompt_tokens", "closed_ns", "server_chunk_s", "tags",
          "server", "session", "turn", "worker")
RUN = {"target": "http://127.0.0.1:1", "model": "m", "load": "poisson@10.00", "complete": True, "settings": {}}


def _record(rid: int) -> dict[str, Any]:
    return {"id": rid, "intended_ns": 1_000_000 * rid, "sent_ns": 1_000_000 * rid + 5, "status": "ok",
            "chunk_ns": [1_000_000 * rid + 100, 1_000_000 * rid + 200], "chunk_tokens": [1, 2],
            "token_source": "server", "output_tokens": 3, "output_tokens_estimated": False, "prompt_tokens": 12,
            "closed_ns": 1_000_000 * rid + 300, "server_chunk_s": [0.1, 0.2], "tags": {"t": "a"},
            "server": {"queue_s": 0.001}}


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6)


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    rid = draw(st.integers(min_value=0, max_value=6))  # a small range: duplicate ids are common
    data: dict[str, Any] = _record(rid)
    kind = draw(st.sampled_from(["good", "replace", "drop", "cut", "bytes", "blank", "nan", "twice"]))
    if kind == "replace":
        data[draw(st.sampled_from(FIELDS))] = draw(JSON_VALUES)
    elif kind == "drop":
        data.pop(draw(st.sampled_from(FIELDS)), None)
    try:
        raw = orjson.dumps(data)
    except TypeError:  # an integer beyond 64 bits: the json module writes it
        raw = json.dumps(data).encode()
    if kind == "cut":
        raw = raw[: draw(st.integers(min_value=0, max_value=len(raw)))]
    elif kind == "bytes":
        raw = draw(st.binary(max_size=40)).replace(b"\n", b"")
    elif kind == "blank":
        raw = draw(st.sampled_from([b"", b" ", b"\t\r"]))
    elif kind == "nan":
        raw = raw.replace(b'"queue_s":0.001', b'"queue_s":NaN')
    elif kind == "twice":
        raw = raw + raw
    return raw + b"\n"


@st.composite
def files(draw: st.DrawFn) -> bytes:
    body = b"".join(draw(st.lists(lines(), max_size=12)))
    if body and draw(st.booleans()):
        body = body[:-1]  # no newline at the end: perhaps a torn last line
    return body


def _check_readers(path: Path) -> None:
    frame, report = read_jsonl_frame(path)
    torn = 1 if report.torn_last_line is not None else 0
    assert report.lines == report.records + len(report.skipped) + report.blank + torn
    assert frame.n == report.records
    assert len(set(frame.ids.tolist())) == frame.n  # no request counted twice
    try:
        table, arrow = read_records_checked(path)
        arrow_frame = frame_from_table(table)
    except pa.ArrowException:
        return  # Arrow declines: the line reader is the one used (loadgen.run.outputs)
    assert (arrow.records, arrow.skipped, arrow.torn_last_line) == (report.records, report.skipped,
                                                                     report.torn_last_line)
    assert_same_frame(arrow_frame, frame)


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(files())
def test_any_file_is_read_to_an_account_of_every_line(tmp_path_factory: pytest.TempPathFactory, body: bytes) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "records.jsonl"
    path.write_bytes(body)
    _check_readers(path)


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(files())
def test_report_on_any_file_ends_with_an_exit_code_not_a_traceback(tmp_path_factory: pytest.TempPathFactory,
                                                                   body: bytes) -> None:
    out = tmp_path_factory.mktemp("run")
    (out / "records.jsonl").write_bytes(body)
    (out / "run.json").write_text(json.dumps(RUN))
    assert run_cli(["report", str(out), "--quiet"]) in (0, 1, 2)
