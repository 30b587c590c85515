"""The summary's typed values written back: for the golden summary.json and summaries the builder writes here,
each section viewed (metrics.results.summary_*) and written again (`to_json`) is the section as it was, byte
for byte through json.dumps (key order, int against float, null against an absent key)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from metrics.results import (
    Bucket,
    Goodput,
    Reasoning,
    Requests,
    Saturation,
    Server,
    Sessions,
    Stalls,
    Stats,
    SummaryDocument,
    SummaryView,
    Throughput,
    Tokens,
    ToolCalls,
    Window,
)
from metrics.slo import parse_slo
from metrics.summary.build import SummaryConfig, summarize
from tests.metrics._reasoning import reasoning_records
from tests.metrics._records import rec
from tests.metrics.test_summary import _config, _run
from tests.metrics.test_turns import RECORDS as TURN_RECORDS

GOLDEN = Path(__file__).resolve().parent.parent / "fixtures" / "golden" / "expected" / "run" / "summary.json"


def _failed_run() -> list[Any]:
    return [rec(i, a=1000 * i, d=1000 * i, chunks=[], n=0, status="error", error_kind="timeout_total",
                closed=1000 * i + 500) for i in range(3)]


SUMMARIES: dict[str, Callable[[], Any]] = {
    "golden": lambda: json.loads(GOLDEN.read_text()),
    "hand-made run": lambda: summarize(_run(), _config(), {"target": "http://127.0.0.1:1"}),
    "reasoning": lambda: summarize(reasoning_records(), SummaryConfig(slo=parse_slo(["ttfo=1s"])), {}),
    "conversations": lambda: summarize(TURN_RECORDS, SummaryConfig(), {}),
    "everything failed": lambda: summarize(_failed_run(), SummaryConfig(slo=parse_slo(["ttft=1s"])), {}),
    "empty": lambda: summarize([], SummaryConfig(), {}),
}


def _same(before: Any, after: Any) -> None:
    assert after == before
    assert json.dumps(after) == json.dumps(before)  # 1 and 1.0 compare equal; their JSON does not


def _blocks(summary: dict[str, Any]) -> list[Any]:
    """Every latency block the summary holds."""
    sections = [summary["latency"], *(b["latency"] for b in summary["buckets"])]
    for name in ("reasoning", "tool_calls"):
        sections += [s[name] for s in (summary, *summary["buckets"]) if name in s]
    server = [v for k, v in summary["server"].items() if k not in ("prometheus", "requests_with_timing")]
    return [block for section in sections for block in section.values() if isinstance(block, dict) and "p50" in block] + server


@pytest.mark.parametrize("name", SUMMARIES)
def test_every_latency_block_is_written_back_as_it_was(name: str) -> None:
    blocks = _blocks(SUMMARIES[name]())
    assert blocks
    for block in blocks:
        stats = Stats.from_json(block)
        assert stats is not None
        _same(block, stats.to_json())


def test_a_block_keeps_its_key_order_and_number_types() -> None:
    block = {"count": 2, "mean": 1.0, "std": 0.0, "min": 1.0, "p50": 1.0, "p90": 1.0, "p95": 1.0, "p99": 1.0,
             "p999": 1.0, "max": 1.0}
    assert list(Stats.from_json(block).to_json()) == list(block)  # type: ignore[union-attr]
    assert json.dumps(Stats.from_json(block).to_json()) != json.dumps({**block, "count": 2.0})  # type: ignore[union-attr]
    assert Stats.empty().to_json() == dict.fromkeys(block) | {"count": 0}


SECTIONS: dict[str, Callable[[Any], Any]] = {
    "requests": Requests.from_json,
    "throughput": Throughput.from_json,
    "stalls": Stalls.from_json,
    "tokens": Tokens.from_json,
    "goodput": Goodput.from_json,
    "reasoning": Reasoning.from_json,
    "tool_calls": ToolCalls.from_json,
    "sessions": Sessions.from_json,
}


def _without_prometheus(server: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in server.items() if k != "prometheus"}  # the run adds it from its own scrape


@pytest.mark.parametrize("name", SUMMARIES)
def test_every_section_is_written_back_as_it_was(name: str) -> None:
    summary = SUMMARIES[name]()
    seen = 0
    for section, view in SECTIONS.items():
        if section in summary:
            _same(summary[section], view(summary[section]).to_json())
            seen += 1
    assert seen == 5 + 2 * ("reasoning" in summary) + ("sessions" in summary)
    for bucket in summary["buckets"]:
        _same(bucket, Bucket.from_json(bucket).to_json())  # type: ignore[union-attr]
    _same(_without_prometheus(summary["server"]), Server.from_json(summary["server"]).to_json())
    _same(summary["run"]["window"], Window.from_json(summary["run"]["window"]).to_json())
    _same(summary["run"]["client_saturation"], Saturation.from_json(summary["run"]["client_saturation"]).to_json())  # type: ignore[union-attr]


@pytest.mark.parametrize("name", SUMMARIES)
def test_the_whole_document_is_written_back_as_it_was(name: str) -> None:
    """The view's sections and run.json's content, written in one step: the document as it was, but for what
    the run adds to it afterwards (`input`, `roofline`, `gpu`, `server.prometheus`)."""
    summary = SUMMARIES[name]()
    view = SummaryView.from_json(summary)
    assert view.goodput is not None and view.stalls is not None and view.run.client_saturation is not None
    run = {k: v for k, v in summary["run"].items()
           if k not in ("window", "percentile_method", "client_saturated", "client_saturation")}
    document = SummaryDocument(
        run=run, window=view.run.window, percentile_method=view.run.percentile_method,
        client_saturation=view.run.client_saturation, requests=view.requests, throughput=view.throughput,
        latency=view.latency, stalls=view.stalls, tokens=view.tokens, burst_delivered=summary["burst_delivered"],
        goodput=view.goodput, buckets=view.buckets, server=view.server, reasoning=view.reasoning,
        tool_calls=view.tool_calls, sessions=view.sessions,
    )
    expected = {k: v for k, v in summary.items() if k not in ("input", "roofline", "gpu")}
    expected["server"] = _without_prometheus(summary["server"])
    _same(expected, document.to_json())


def test_a_changed_type_or_order_is_seen() -> None:
    """The comparison itself: an int written as a float, or two keys swapped, fail it."""
    section = {"threshold_s": 1.0, "count": 0, "total_s": 0.0, "requests_with_stalls": 0}
    with pytest.raises(AssertionError):
        _same({**section, "count": 0.0}, section)
    with pytest.raises(AssertionError):
        _same({"count": 0, "threshold_s": 1.0, "total_s": 0.0, "requests_with_stalls": 0}, section)
