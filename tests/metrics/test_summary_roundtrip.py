"""The summary's typed values written back: for the golden summary.json and summaries the builder writes here,
each section viewed (metrics.results.summary_*) and written again (`to_json`) is the section as it was, byte
for byte through json.dumps (key order, int against float, null against an absent key)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from metrics.results import Stats
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
