"""The typed view of summary.json (metrics.results.summary_view): the golden run's summary read into its
fields (values taken from tests/fixtures/golden/expected/run/summary.json by hand), every section a
summary lacks read as its exporters have always read it, numbers kept as the document holds them (so that
a view prints the same bytes), and the view frozen."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from exporters.console import format_summary
from exporters.console_notes import requests_line
from metrics.results import SUMMARY_FILE, read_summary_view
from metrics.results.summary_stats import STAT_KEYS, Stats
from metrics.results.summary_view import SummaryView

GOLDEN = Path(__file__).resolve().parent.parent / "fixtures" / "golden" / "expected" / "run"


@pytest.fixture(scope="module")
def golden() -> SummaryView:
    return read_summary_view(GOLDEN)


def test_the_golden_summary_reads_into_typed_fields(golden: SummaryView) -> None:
    req = golden.requests
    assert (req.records, req.sent, req.succeeded, req.failed, req.cancelled) == (24, 24, 17, 5, 2)
    assert req.errors == {"http_status": 5, "planned_cancel": 2} and req.failure_messages_distinct == 1
    assert req.failure_messages is not None and len(req.failure_messages) == 1
    failure = req.failure_messages[0]
    assert (failure.kind, failure.http_status, failure.count) == ("http_status", 500, 5)
    assert golden.throughput.offered_rps == 21.018373169783462
    ttft = golden.stats("ttft_s")
    assert ttft is not None and (ttft.count, ttft.p50, ttft.p99) == (17, 0.015297935, 0.035833674239999995)
    fluidity = golden.stats("fluidity")
    assert fluidity == Stats(count=0) and not fluidity.has_samples  # an empty block: None everywhere else
    assert golden.goodput is not None and (golden.goodput.good, golden.goodput.measured) == (17, 22)
    assert golden.goodput.bound("ttft_s") == 0.05 and golden.goodput.bound("e2e_s") is None
    assert [(b.dimension, b.label) for b in golden.buckets][:2] == [("prompt_tokens", "<64"), ("prompt_tokens", "64-128")]
    assert golden.buckets[0].measured == 3 and golden.buckets[0].failed == 1
    run = golden.run
    assert (run.model, run.load, run.window.measured, run.seed) == ("goodput-tiny", "poisson@20.00", 24, 7)
    assert run.client_saturation is not None and run.client_saturation.threshold_s == 0.01
    assert run.workload.kind == "synthetic" and run.workload.chat_template_tokens == 3
    assert run.resolved.ignore_eos is True and run.resolved.sizing_method == "counter"
    assert golden.reasoning is not None and golden.reasoning.reasoning_tokens_total == 84
    assert golden.tool_calls is not None and golden.tool_calls.calls == 0
    assert golden.roofline is not None and (golden.roofline.floors_model, golden.roofline.batch) == ("Llama-3.1-8B", 2)
    assert golden.tokens.prompt_accuracy is not None and golden.tokens.prompt_accuracy.abs_rel_error_p50 == 1 / 48


def test_numbers_keep_the_type_the_document_gives_them(golden: SummaryView) -> None:
    # 0.0 must print "0.0", as the dict did: a view that turned it into 0 (or 17 into 17.0) changes the console
    assert isinstance(golden.run.window.warmup_s, float) and str(golden.run.window.warmup_s) == "0.0"
    ttft = golden.stats("ttft_s")
    assert ttft is not None and isinstance(ttft.count, int)
    assert ttft.values() == tuple(json.loads((GOLDEN / SUMMARY_FILE).read_text())["latency"]["ttft_s"][k]
                                  for k in STAT_KEYS)


def test_a_summary_without_sections_reads_as_its_readers_read_it() -> None:
    empty = SummaryView.from_json({})
    assert empty.goodput is None and empty.reasoning is None and empty.roofline is None and empty.buckets == ()
    assert empty.requests.records is None and empty.requests.failed is None and empty.requests.sent == 0
    assert empty.run.complete is True and empty.run.percentile_method == "linear" and empty.run.window.warmup_s == 0
    assert SummaryView.from_json([1, 2]) == empty  # not an object: nothing to read
    assert SummaryView.from_json({"goodput": {}}).goodput is None  # an empty section prints no goodput line
    # schema 1: `sent` counted every record, and the console's line still adds up
    old = SummaryView.from_json({"requests": {"sent": 5, "never_sent": 1, "succeeded": 4, "failed": 1}})
    assert requests_line(old.requests).startswith("requests: 5 = 4 sent + 1 never sent  |  5 = ok 4 + failed 1")
    # a wrongly typed value reads as absent instead of crashing a reader
    odd = SummaryView.from_json({"requests": {"failed": "x", "records": True}, "latency": {"ttft_s": 3}})
    assert odd.requests.failed is None and odd.requests.records == 0 and odd.latency == {}


def test_the_console_prints_a_minimal_summary_with_the_readers_defaults() -> None:
    text = format_summary({"run": {"window": {}}}).splitlines()
    assert text[0] == "target ?  model ?  load ?"
    assert text[2] == "window: 0 requests over - s (warm-up 0 s, cool-down 0 s)"


def test_the_view_is_frozen(golden: SummaryView) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        golden.run.window.measured = 1  # type: ignore[misc]


def test_a_missing_summary_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=f"no {SUMMARY_FILE} in"):
        read_summary_view(tmp_path)


def test_the_server_section_reads_its_histograms_as_ranges(golden: SummaryView) -> None:
    prom = golden.server.prometheus
    assert prom is not None and prom.available and prom.interval_s is not None
    queue = prom.histograms["queue_s"]
    assert (queue.metric, queue.count) == ("vllm:request_queue_time_seconds", 19.0)
    assert queue.p50.bucket == (0.0, 0.3) and queue.p50.range == (0.0, 0.012658544111117307)
    assert prom.gauges["running"].max == 0.0 and prom.prefix_cache_hit_rate == 0.0 and prom.absent == ()
    assert set(golden.server.per_request) >= {"ttft_s", "queue_s", "ttft_client_minus_server_s"}
    assert "prometheus" not in golden.server.per_request and "requests_with_timing" not in golden.server.per_request
    open_top = SummaryView.from_json({"server": {"prometheus": {"available": True, "histograms": {
        "e2e_s": {"count": 2, "p99": 70.0, "p99_bucket": [60.0, None]}}}}})
    assert open_top.server.prometheus is not None
    assert open_top.server.prometheus.histograms["e2e_s"].p99.bucket == (60.0, None)  # +Inf kept as None
    assert SummaryView.from_json({"server": {"prometheus": {}}}).server.prometheus is None  # no scrape: no section


def test_the_gpu_section_reads_as_its_readers_read_it() -> None:
    assert SummaryView.from_json({}).gpu is None
    down = SummaryView.from_json({"gpu": {"available": False, "sources": [{"name": "d", "scrapes": 0,
                                                                           "failed_scrapes": 2}]}}).gpu
    assert down is not None and down.reason == "nothing scraped" and down.sources[0].failed_scrapes == 2
    gpu = SummaryView.from_json({"gpu": {"available": True, "gpus": [{"source": "dcgm", "gpu": 0,
                                                                      "utilization_pct": {"mean": 80, "max": 90}}],
                                         "total": {"gpus": 1, "energy_note": "no power"}}}).gpu
    assert gpu is not None and gpu.gpus[0].gpu == "0" and gpu.gpus[0].hostname == ""
    assert gpu.gpus[0].figures.utilization_pct.max == 90 and gpu.gpus[0].figures.power_w_mean is None
    assert gpu.total.gpus == 1 and gpu.total.energy_note == "no power" and gpu.total.joules_per_output_token is None


def test_the_gate_reads_the_golden_summary_through_the_view() -> None:
    from metrics.gate.evaluate import RunView, summary_value
    from metrics.gate.thresholds import parse_threshold

    summary = json.loads((GOLDEN / SUMMARY_FILE).read_text())
    run = RunView(summary)

    def value(text: str) -> float | None:
        query = parse_threshold(text).query
        got = run.value(query)
        assert got == summary_value(summary, query)  # the cached view and a fresh parse agree
        return got

    # the bucket prompt_tokens=<64 of tests/fixtures/golden/expected/run/summary.json, read by hand
    assert value("reasoning_tokens{prompt:<64}:p(50) < 10") == 4.0
    assert value("goodput{prompt:<64}:attainment > 0.1") == 0.5
    assert value("errors{prompt:<64}:rate < 1") == 1 / 3
    assert value("tool_calls:count > 0") == 17.0  # calls_per_request's count: a float, as thresholds compare
    assert value("errors:count < 99") == 5.0 and value("goodput:count > 0") == 17.0
    assert value("ttft{prompt:nosuch}:p(99) < 1s") is None  # nobody in that bucket
