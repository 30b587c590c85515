"""Every goodput series carries the model each request named, so a mix's models can be told apart (and a
one-model run has the same label names: queries that sum over the other labels read the same)."""

from __future__ import annotations

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from exporters.prometheus.live import LiveConfig, RunMetrics
from metrics.slo import parse_slo
from tests.metrics._records import rec


def _series(text: str, name: str) -> dict[str, float]:
    """The value of `name` per model label, summed over the other labels."""
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name:
                out[s.labels["model"]] = out.get(s.labels["model"], 0.0) + s.value
    return out


def test_series_carry_the_model_label() -> None:
    metrics = RunMetrics(LiveConfig(run_id="r", slo=parse_slo(["ttft=250ms"])))
    # base: TTFT 100 and 200 ms (good); lora-a: 300 ms (not good) and one error; one record without a model.
    for record in (rec(0, a=0, d=0, chunks=[100], k=[1], closed=110, model="base"),
                   rec(1, a=0, d=0, chunks=[200], k=[1], closed=210, model="base"),
                   rec(2, a=0, d=0, chunks=[300], k=[1], closed=310, model="lora-a"),
                   rec(3, a=0, d=0, chunks=[], n=0, closed=50, status="error", error_kind="http_status",
                       model="lora-a"),
                   rec(4, a=0, d=0, chunks=[50], k=[1], closed=60)):
        metrics.observe(record)
    text = generate_latest(metrics.registry).decode()
    assert _series(text, "goodput_requests_total") == {"base": 2, "lora-a": 2, "": 1}
    assert _series(text, "goodput_evaluated_requests_total") == {"base": 2, "lora-a": 2, "": 1}
    assert _series(text, "goodput_good_requests_total") == {"base": 2, "lora-a": 0, "": 1}
    assert _series(text, "goodput_ttft_seconds_count") == {"base": 2, "lora-a": 1, "": 1}
    assert _series(text, "goodput_ttft_seconds_sum") == pytest.approx({"base": 0.3, "lora-a": 0.3, "": 0.05})


def test_one_model_runs_have_the_label_too() -> None:
    metrics = RunMetrics(LiveConfig(run_id="r"))
    metrics.observe(rec(0, a=0, d=0, chunks=[100], k=[1], closed=110, model="only"))
    text = generate_latest(metrics.registry).decode()
    for name in ("goodput_requests_total", "goodput_ttft_seconds_bucket", "goodput_output_tokens_total"):
        assert _series(text, name).keys() == {"only"}
