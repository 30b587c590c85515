"""The reasoning and tool-call families in the text exposition: names, values worked out by hand from the
records of tests.metrics._reasoning, and their absence from a run that has none of it."""

from __future__ import annotations

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from exporters.prometheus.live import LiveConfig, RunMetrics
from metrics.records.frame import frame_from_records
from metrics.records.record import RequestRecord
from metrics.slo import parse_slo
from tests.metrics._reasoning import reasoning_records
from tests.metrics._records import MS, rec


def _text(records: list[RequestRecord], *slo: str) -> str:
    metrics = RunMetrics(LiveConfig(run_id="t", slo=parse_slo(list(slo))))
    for r in records:
        metrics.observe(r)
    return generate_latest(metrics.registry).decode()


def _values(text: str, name: str) -> dict[str, float]:
    """`le` (or "" for an unlabelled-by-le sample) → value, the one label set of these records."""
    return {s.labels.get("le", ""): s.value for f in text_string_to_metric_families(text) for s in f.samples
            if s.name == name}


def test_ttfo_and_reasoning_time_histograms() -> None:
    text = _text(reasoning_records())  # TTFO 110, 50, 310 ms; reasoning time 100, 300 ms
    assert _values(text, "goodput_ttfo_seconds_count") == {"": 3.0}
    assert abs(_values(text, "goodput_ttfo_seconds_sum")[""] - 0.470) < 1e-12
    ttfo = _values(text, "goodput_ttfo_seconds_bucket")
    assert (ttfo["0.05"], ttfo["0.1"], ttfo["0.15"], ttfo["0.3"], ttfo["0.4"], ttfo["+Inf"]) == (1, 1, 2, 2, 3, 3)
    assert _values(text, "goodput_reasoning_time_seconds_count") == {"": 2.0}
    assert abs(_values(text, "goodput_reasoning_time_seconds_sum")[""] - 0.400) < 1e-12
    assert _values(text, "goodput_tool_call_seconds_count") == {"": 1.0}
    assert _values(text, "goodput_tool_call_done_seconds_bucket")["0.4"] == 1.0
    assert _values(text, "goodput_tool_call_done_seconds_bucket")["0.3"] == 0.0


def test_token_and_tool_call_counters_and_histograms() -> None:
    text = _text(reasoning_records())  # R = 30, 0, 20; answer tokens 10, 10, 30; one tool call
    assert _values(text, "goodput_reasoning_tokens_total") == {"": 50.0}
    assert _values(text, "goodput_answer_tokens_total") == {"": 50.0}
    assert _values(text, "goodput_tool_calls_total") == {"": 1.0}
    tokens = _values(text, "goodput_reasoning_tokens_per_request_bucket")
    assert (tokens["16.0"], tokens["32.0"]) == (1, 3)
    assert _values(text, "goodput_reasoning_tokens_per_request_sum") == {"": 50.0}
    calls = _values(text, "goodput_tool_calls_per_request_bucket")
    assert (calls["0.0"], calls["1.0"], calls["+Inf"]) == (2, 3, 3)


def test_ttfo_slo_is_a_boundary_and_judges_good_requests() -> None:
    text = _text(reasoning_records(), "ttfo=120ms")
    assert _values(text, "goodput_ttfo_seconds_bucket")["0.12"] == 2.0
    assert _values(text, "goodput_good_requests_total") == {"": 2.0}
    slo = {s.labels["slo"]: s.value for f in text_string_to_metric_families(text) for s in f.samples
           if s.name == "goodput_slo_threshold_seconds"}
    assert slo == {"ttfo": 0.12}


def test_a_run_without_reasoning_exposes_exactly_what_it_did() -> None:
    plain = [rec(i, a=100 * i, d=100 * i, chunks=[100 * i + 30, 100 * i + 45], prompt_tokens=10) for i in range(3)]
    stamped = [rec(i, a=100 * i, d=100 * i, chunks=[100 * i + 30, 100 * i + 45], prompt_tokens=10,
                   answer_ns=(100 * i + 30) * MS, reasoning_tokens=0, reasoning_tokens_source="usage")
               for i in range(3)]
    text = _text(stamped)
    assert text == _text(plain)
    assert "ttfo" not in text and "reasoning" not in text and "tool_call" not in text


def test_families_appear_once_a_later_batch_reasons() -> None:
    """Live: the first scrape sees plain answers only; TTFO of those is kept for when reasoning shows up."""
    metrics = RunMetrics(LiveConfig(run_id="t"))
    records = reasoning_records()
    metrics.observe(records[1])  # r1 did not reason
    assert "goodput_ttfo_seconds" not in generate_latest(metrics.registry).decode()
    metrics.observe(records[0])
    metrics.observe(records[2])
    text = generate_latest(metrics.registry).decode()
    assert _values(text, "goodput_ttfo_seconds_count") == {"": 3.0}


def test_a_whole_run_folded_at_once_equals_one_by_one() -> None:
    one = _text(reasoning_records())
    metrics = RunMetrics(LiveConfig(run_id="t"))
    metrics.fold(frame_from_records(reasoning_records()))
    assert generate_latest(metrics.registry).decode() == one


def test_the_loadgen_dashboard_has_ttfo_and_reasoning_panels() -> None:
    from exporters.grafana.dashboards import loadgen_dashboard

    panels = {p["title"]: [t["expr"] for t in p.get("targets", [])] for p in loadgen_dashboard()["panels"]}
    assert any("goodput_ttfo_seconds_bucket" in e for e in panels["TTFO"])
    assert any("goodput_reasoning_time_seconds_bucket" in e for e in panels["Reasoning time"])
    assert any("goodput_reasoning_tokens_total" in e for e in panels["Reasoning and answer tokens/s"])
    assert any("goodput_tool_calls_total" in e for e in panels["Tool calls/s"])
