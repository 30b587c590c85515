"""Several models in one run: `model` is a bucket dimension of summary.json (only when more than one model
ran), and thresholds filter on it (`{model:lora-a}`). Every expected number is worked out by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from metrics.gate.evaluate import RunView, evaluate
from metrics.gate.run_samples import RunSamples
from metrics.gate.thresholds import parse_threshold
from metrics.records.frame import frame_from_records
from metrics.records.record import RequestRecord
from metrics.slo import parse_slo
from metrics.summary.build import SummaryConfig, summarize
from tests.metrics._records import rec

CONFIG = SummaryConfig(slo=parse_slo(["ttft=250ms"]))


def _records() -> list[RequestRecord]:
    """TTFT (first chunk − send): base 100 and 200 ms (both good under 250 ms); lora-a 300 ms (ok, not
    good) and one HTTP error; one record that names no model, 50 ms."""
    common: dict[str, Any] = {"prompt_tokens": 10, "prompt_tokens_estimated": False}
    return [
        rec(0, a=0, d=0, chunks=[100, 110], k=[1, 1], closed=120, model="base", **common),
        rec(1, a=100, d=100, chunks=[300, 310], k=[1, 1], closed=320, model="base", **common),
        rec(2, a=200, d=200, chunks=[500, 510], k=[1, 1], closed=520, model="lora-a", **common),
        rec(3, a=300, d=300, chunks=[], n=0, closed=310, status="error", error_kind="http_status", model="lora-a"),
        rec(4, a=400, d=400, chunks=[450, 460], k=[1, 1], closed=470, **common),
    ]


def _by_label(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {b["label"]: b for b in summary["buckets"] if b["dimension"] == "model"}


def test_each_model_is_a_bucket() -> None:
    buckets = _by_label(summarize(_records(), CONFIG, {}))
    assert list(buckets) == ["base", "lora-a", "unknown"]
    base, lora, unknown = buckets["base"], buckets["lora-a"], buckets["unknown"]
    assert (base["measured"], base["ok"], base["failed"], base["good"]) == (2, 2, 0, 2)
    assert (lora["measured"], lora["ok"], lora["failed"], lora["good"]) == (2, 1, 1, 0)
    assert (unknown["measured"], unknown["good"]) == (1, 1)
    assert base["latency"]["ttft_s"]["p50"] == pytest.approx(0.150)  # halfway between 100 and 200 ms
    assert lora["latency"]["ttft_s"]["max"] == pytest.approx(0.300)
    assert base["goodput"]["attainment"] == 1.0 and lora["goodput"]["attainment"] == 0.0


def test_one_model_makes_no_model_dimension() -> None:
    records = _records()
    for r in records:
        r.model = "base"
    assert _by_label(summarize(records, CONFIG, {})) == {}
    assert "model" not in {b["dimension"] for b in summarize(_records()[4:], CONFIG, {})["buckets"]}


def test_a_model_filter_judges_that_model_alone() -> None:
    assert parse_threshold("ttft{model:lora-a}:p(99)<1s").query.filters == (("model", "lora-a"),)
    assert parse_threshold("ttft{model:llama3:8b}:p(99)<1s").query.filters == (("model", "llama3:8b"),)
    assert parse_threshold("ttft{tag:model:x}:p(99)<1s").query.filters == (("tag:model", "x"),)
    assert parse_threshold("ttft{model:lora-a}:p(99)<1s").query.describe() == "ttft{model:lora-a}:p(99)"
    records = _records()
    frame = frame_from_records(records)
    view = RunView(summarize(records, CONFIG, {}), records=lambda: RunSamples(frame, CONFIG))
    texts = ["goodput{model:base}:attainment>=1", "goodput{model:lora-a}:attainment>=0.5",
             "ttft{model:base}:max<250ms", "ttft{model:lora-a}:max<250ms", "errors{model:lora-a}:count==1",
             "ttft{model:base,cache:unknown}:max<=200ms", "ttft{model:nobody}:max<1s"]
    verdicts = evaluate([parse_threshold(t) for t in texts], view)
    assert [v.passed for v in verdicts] == [True, False, True, False, True, True, False]
    assert verdicts[-1].value is None  # a model that never ran: no data, which fails


def test_every_frame_builder_reads_the_model(tmp_path: Path) -> None:
    from metrics.records.frame_arrow import frame_from_table, read_records_table
    from metrics.records.jsonl import read_jsonl_frame

    records = _records()
    path = tmp_path / "records.jsonl"
    path.write_bytes(b"".join(r.to_json() + b"\n" for r in records))
    expected = ["base", "base", "lora-a", "lora-a", None]
    assert frame_from_records(records).model == expected
    assert read_jsonl_frame(path)[0].model == expected
    assert frame_from_table(read_records_table(path)).model == expected


def test_the_console_and_the_html_report_show_each_model() -> None:
    from exporters.console import format_summary
    from exporters.html.tables import buckets_table
    from metrics.results import SummaryView

    summary = summarize(_records(), CONFIG, {"target": "http://127.0.0.1:1", "model": "base,lora-a"})
    lines = format_summary(summary).splitlines()
    shown = {line.split()[0]: line.split()[1:3] for line in lines if line.startswith("model=")}
    assert shown == {"model=base": ["2", "0"], "model=lora-a": ["2", "1"], "model=unknown": ["1", "0"]}  # n, failed
    rows = [row[:5] for row in buckets_table(SummaryView.from_json(summary)).rows if row[0] == "model"]
    assert [[str(c) for c in row] for row in rows] == [["model", "base", "2", "2", "0"],
                                                        ["model", "lora-a", "2", "1", "1"],
                                                        ["model", "unknown", "1", "1", "0"]]
