"""The live exporter against summary.json: same samples, same counts, quantiles within a bucket."""

from __future__ import annotations

import functools
import socket
from dataclasses import dataclass

import httpx
import pytest
from prometheus_client import REGISTRY, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from exporters.prometheus.histogram_buckets import LATENCY_LADDER_S, lag_buckets, latency_buckets
from exporters.prometheus.live import LiveConfig, RunMetrics
from exporters.prometheus.server import serve_metrics
from loadgen.run.scrape import parse_exposition
from metrics.records.record import RequestRecord
from metrics.server.histograms import INF, histogram_quantile
from metrics.slo import parse_slo
from metrics.summary.build import SummaryConfig, summarize
from tests.exporters._quantiles import check_quantile, latency_samples
from tests.exporters._records import MS, random_records

SLO_SPECS = ["ttft=123ms", "tpot=17ms", "e2e=2.5s"]


def _exposition(metrics: RunMetrics) -> str:
    return generate_latest(metrics.registry).decode()


@functools.lru_cache(maxsize=8)
def _parsed(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """Every sample of an exposition by name: parsed once, since a test reads many names of one text."""
    by_name: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            by_name.setdefault(s.name, []).append((s.labels, s.value))
    return by_name


def _samples(text: str, name: str) -> list[tuple[dict[str, str], float]]:
    return [(dict(labels), value) for labels, value in _parsed(text).get(name, [])]


def test_bucket_ladders_span_1ms_to_minutes_and_include_every_threshold() -> None:
    bounds = latency_buckets([0.123, 0.017, 2.5, None])
    assert bounds[0] == 0.001 and bounds[-1] >= 300
    assert {0.123, 0.017, 2.5} <= set(bounds)
    assert list(bounds) == sorted(set(bounds))
    assert set(LATENCY_LADDER_S) <= set(bounds)
    assert 0.0125 in lag_buckets([0.0125])
    with pytest.raises(ValueError, match="> 0"):
        latency_buckets([0.0])


def test_a_value_equal_to_a_threshold_counts_as_within_it() -> None:
    rec = RequestRecord(id=0, intended_ns=0, sent_ns=0, chunk_ns=[123 * MS, 140 * MS], chunk_tokens=[1, 1],
                        token_source="server", output_tokens=2, prompt_tokens=10, cached_tokens=0)
    metrics = RunMetrics(LiveConfig(run_id="t", slo=parse_slo(SLO_SPECS)))
    metrics.observe(rec)
    buckets = {s[0]["le"]: s[1] for s in _samples(_exposition(metrics), "goodput_ttft_seconds_bucket")}
    assert buckets["0.123"] == 1.0 and buckets["0.1"] == 0.0
    assert _samples(_exposition(metrics), "goodput_good_requests_total")[0][1] == 1.0


@pytest.fixture(scope="module")
def run() -> tuple[list[RequestRecord], dict[str, object], str]:
    records = random_records(400, seed=3, error_every=9)
    slo = parse_slo(SLO_SPECS)
    summary = summarize(records, SummaryConfig(slo=slo, warmup_s=1.0), {})
    metrics = RunMetrics(LiveConfig(run_id="t", slo=slo, warmup_s=1.0))
    for r in records:
        metrics.observe(r)
    return records, summary, _exposition(metrics)


def test_counters_add_up_like_the_summary(run: tuple[list[RequestRecord], dict, str]) -> None:
    records, summary, text = run
    by_status: dict[str, float] = {}
    for labels, value in _samples(text, "goodput_requests_total"):
        by_status[labels["status"]] = by_status.get(labels["status"], 0.0) + value
    assert by_status == {"ok": summary["requests"]["succeeded"], "error": summary["requests"]["failed"]}
    evaluated = sum(v for _, v in _samples(text, "goodput_evaluated_requests_total"))
    good = sum(v for _, v in _samples(text, "goodput_good_requests_total"))
    assert (evaluated, good) == (summary["goodput"]["measured"], summary["goodput"]["good"])
    assert 0 < good < evaluated < len(records)  # warm-up excluded some; the SLO failed some


def test_request_counters_add_up_like_the_summary_with_requests_never_sent() -> None:
    records = random_records(30, seed=4, error_every=5)
    for r in records[:6]:  # failed before the request was written (e.g. connect errors): never sent
        if r.status == "error":
            r.sent_ns, r.error_kind = None, "connect_error"
    records[7] = RequestRecord(id=7, intended_ns=records[7].intended_ns, sent_ns=None, status="cancelled",
                               error_kind="client_cancelled")
    req = summarize(records, SummaryConfig(), {})["requests"]
    metrics = RunMetrics(LiveConfig(run_id="t"))
    for r in records:
        metrics.observe(r)
    text = _exposition(metrics)
    by: dict[tuple[str, str], float] = {}
    for labels, value in _samples(text, "goodput_requests_total"):
        key = (labels["sent"], labels["status"])
        by[key] = by.get(key, 0.0) + value
    assert sum(by.values()) == req["records"] == 30
    assert sum(v for (sent, _), v in by.items() if sent == "true") == req["sent"]
    assert sum(v for (sent, _), v in by.items() if sent == "false") == req["never_sent"] == 2
    assert by[("false", "error")] == req["failed_before_send"] == 1
    assert by[("false", "cancelled")] == req["cancelled_before_send"] == 1


@pytest.mark.parametrize(("family", "key"), [
    ("goodput_ttft_seconds", "ttft_s"), ("goodput_itl_seconds", "itl_s"),
    ("goodput_itl_per_token_seconds", "itl_token_s"), ("goodput_tpot_seconds", "tpot_s"),
    ("goodput_e2e_seconds", "e2e_s"), ("goodput_dispatch_lag_seconds", "dispatch_lag_s"),
    ("goodput_ttft_from_schedule_seconds", "ttft_from_schedule_s"),
])
def test_histogram_quantiles_agree_with_exact_percentiles(run: tuple[list[RequestRecord], dict, str],
                                                          family: str, key: str) -> None:
    records, summary, text = run
    hist = parse_exposition(text).histograms[family]  # summed over every label set
    block = summary["latency"][key]
    assert hist.count == block["count"] > 0
    assert hist.total == pytest.approx(block["mean"] * block["count"], rel=1e-9)
    finite = [b for b in hist.bounds if b != INF]
    samples = latency_samples(records, key, warmup_s=1.0)
    for p, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
        estimate = histogram_quantile(q, hist)
        assert estimate is not None
        check_quantile(estimate, block[p], samples, q, finite)


def test_every_run_has_its_own_registry() -> None:
    a = RunMetrics(LiveConfig(run_id="a"))
    b = RunMetrics(LiveConfig(run_id="b"))
    a.observe(random_records(3)[0])
    assert a.registry is not b.registry
    assert "goodput_ttft_seconds_bucket" in _exposition(a)
    assert "goodput_ttft_seconds_bucket" not in _exposition(b)
    assert "goodput_" not in generate_latest(REGISTRY).decode()


def test_labels_are_bounded_and_never_carry_ids(run: tuple[list[RequestRecord], dict, str]) -> None:
    _, _, text = run
    allowed = {"prompt_bucket", "cache", "scenario", "tenant", "status", "error_kind", "sent", "le", "slo",
               "run_id", "model", "load"}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            assert set(s.labels) <= allowed, s
    histogram_series = {tuple(sorted(s[0].items())) for s in _samples(text, "goodput_ttft_seconds_count")}
    assert len(histogram_series) <= 6 * 4  # prompt buckets x cache classes, one scenario


@dataclass
class _State:
    sent: int = 7
    in_flight: int = 3


def test_live_endpoint_serves_gauges_and_stops() -> None:
    metrics = RunMetrics(LiveConfig(run_id="live", offered_rps=4.0, slo=parse_slo(["ttft=1s"])), state=_State())
    server = serve_metrics(metrics.registry, port=0)
    try:
        text = httpx.get(server.url, timeout=10).text
    finally:
        server.stop()
    assert _samples(text, "goodput_in_flight_requests") == [({}, 3.0)]
    assert _samples(text, "goodput_requests_dispatched_total") == [({}, 7.0)]
    assert not _samples(text, "goodput_requests_sent_total")  # the old name counted requests never sent
    assert _samples(text, "goodput_offered_rate_requests_per_second") == [({}, 4.0)]
    assert _samples(text, "goodput_slo_threshold_seconds") == [({"slo": "ttft"}, 1.0)]
    with pytest.raises(httpx.ConnectError):  # nothing listens there any more
        httpx.get(server.url, timeout=10)
    server.stop()  # idempotent


def test_port_in_use_is_a_clear_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        with pytest.raises(RuntimeError, match="cannot serve metrics"):
            serve_metrics(RunMetrics(LiveConfig(run_id="x")).registry, port=s.getsockname()[1])


def test_scrapes_while_records_arrive_lose_nothing() -> None:
    import threading

    records = random_records(600, seed=9, error_every=5)
    metrics = RunMetrics(LiveConfig(run_id="race"))
    feeder = threading.Thread(target=lambda: [metrics.observe(r) for r in records])
    feeder.start()
    while feeder.is_alive():
        _exposition(metrics)
    feeder.join()
    text = _exposition(metrics)
    assert sum(v for _, v in _samples(text, "goodput_requests_total")) == 600
    assert sum(v for _, v in _samples(text, "goodput_ttft_seconds_count")) == 480


@pytest.mark.parametrize("multi_token", [True, False])
def test_folding_sorted_gap_samples_equals_folding_gap_by_gap(multi_token: bool) -> None:
    """`goodput report` folds ITL from the summary's sorted samples; the histograms must be the ones
    the gap-by-gap fold (the live path) gives."""
    from metrics.records.frame import frame_from_records
    from metrics.summary.build import summarize_frame

    records = random_records(300, seed=8, error_every=7)
    for i, r in enumerate(records):
        if r.chunk_tokens and not multi_token:
            r.chunk_tokens = [1] * len(r.chunk_tokens)
        elif r.chunk_tokens and i % 5 == 0:
            r.chunk_tokens[-1] = 0  # running usage did not move: no per-token sample
    config = SummaryConfig(slo=parse_slo(SLO_SPECS), warmup_s=1.0)
    frame = frame_from_records(records)
    _, per = summarize_frame(frame, config, {})
    live = LiveConfig(run_id="t", slo=config.slo, warmup_s=1.0)
    plain, sorted_ = RunMetrics(live), RunMetrics(live)
    plain.fold(frame)
    sorted_.fold(frame, (per.samples["itl_s"], per.samples["itl_token_s"]))
    a, b = _exposition(plain), _exposition(sorted_)
    for name in ("goodput_itl_seconds", "goodput_itl_per_token_seconds"):
        for suffix in ("_bucket", "_count"):
            assert _samples(a, name + suffix) == _samples(b, name + suffix) != []
        sums = zip(_samples(a, name + "_sum"), _samples(b, name + "_sum"), strict=True)
        assert all(x[0] == y[0] and x[1] == pytest.approx(y[1], rel=1e-12) for x, y in sums)
    assert _samples(a, "goodput_itl_per_token_seconds_count") != _samples(a, "goodput_itl_seconds_count") or not multi_token


def test_planned_cancels_leave_the_live_denominator_as_they_leave_the_summarys() -> None:
    from dataclasses import replace

    records = random_records(40, seed=5)
    records = [replace(r, status="cancelled", error_kind="planned_cancel") if r.id % 4 == 1 else r for r in records]
    slo = parse_slo(SLO_SPECS)
    summary = summarize(records, SummaryConfig(slo=slo), {})
    metrics = RunMetrics(LiveConfig(run_id="t", slo=slo))
    for r in records:
        metrics.observe(r)
    text = _exposition(metrics)
    evaluated = sum(v for _, v in _samples(text, "goodput_evaluated_requests_total"))
    assert summary["goodput"]["excluded_planned_cancels"] == 10
    assert evaluated == summary["goodput"]["measured"] == 30
