"""The server /metrics paragraph: histogram quantiles shown as what the buckets know, exact figures first."""

from __future__ import annotations

import numpy as np
import pytest

from exporters.server_console import format_server_metrics, quantile_text
from loadgen.run.scrape import parse_exposition, prometheus_section
from metrics.latency.stats import stats_block

# vLLM's queue-time buckets start at 0.3 s: every queue time under 300 ms lands in the first one.
QUEUE_BOUNDS = ("0.3", "0.5", "0.8", "1.0", "1.5", "2.0", "+Inf")


def _queue_exposition(counts: tuple[int, ...], total_s: float) -> str:
    lines = ["# TYPE vllm:request_queue_time_seconds histogram"]
    lines += [f'vllm:request_queue_time_seconds_bucket{{le="{le}",model_name="m"}} {c}'
              for le, c in zip(QUEUE_BOUNDS, counts, strict=True)]
    lines += [f'vllm:request_queue_time_seconds_count{{model_name="m"}} {counts[-1]}',
              f'vllm:request_queue_time_seconds_sum{{model_name="m"}} {total_s}']
    return "\n".join(lines) + "\n"


@pytest.fixture
def queue_section() -> dict[str, object]:
    """40 requests, each queued 6 ms on average: all inside the [0, 0.3 s] bucket."""
    before = parse_exposition(_queue_exposition((0,) * 7, 0.0), unix_s=0.0)
    after = parse_exposition(_queue_exposition((40,) * 7, 0.24), unix_s=10.0)
    return prometheus_section([before, after], [], url="u", interval_s=5.0, failures=[])


def test_a_quantile_inside_the_first_bucket_is_shown_as_the_bucket(queue_section: dict[str, object]) -> None:
    text = format_server_metrics(queue_section)
    assert "queue mean 6.0 ms, p50 ≤ 300 ms, p99 ≤ 300 ms" in text
    assert "150.0" not in text and "297.0" not in text  # the interpolated figures the buckets cannot support


def test_exact_per_request_figures_replace_the_histogram(queue_section: dict[str, object]) -> None:
    exact = {"queue_s": stats_block(np.array([0.004, 0.005, 0.006, 0.009]))}
    text = format_server_metrics(queue_section, exact)
    assert "queue p50/p99 5.5 / 8.9 ms (exact, per request)" in text
    assert "≤ 300 ms" not in text


def test_empty_exact_block_falls_back_to_the_histogram(queue_section: dict[str, object]) -> None:
    exact = {"queue_s": stats_block(np.zeros(0))}
    assert "queue mean 6.0 ms" in format_server_metrics(queue_section, exact)


@pytest.mark.parametrize(("value", "bucket", "expected"), [
    (0.15, [0.0, 0.3], "≤ 300 ms"),
    (0.052, [0.04, 0.06], "≈52.0 ms (in 40–60 ms)"),
    (0.15, [0.1, 0.25], "100–250 ms"),  # 2.5× wide: the interpolation is not worth printing
    (2560.0, [2560.0, None], "> 2560 s"),
    (12.0, [10.0, 20.0], "≈12.00 s (in 10–20 s)"),
    (None, None, "-"),
])
def test_quantile_text(value: float | None, bucket: list[float | None] | None, expected: str) -> None:
    assert quantile_text(value, bucket) == expected


def test_not_available_and_absent() -> None:
    assert format_server_metrics(None) == ""
    down = format_server_metrics({"url": "http://x/metrics", "available": False, "last_failure": "refused"})
    assert down == "server /metrics (http://x/metrics): not available (refused)"


def test_a_server_without_vllm_names_says_so() -> None:
    bare = {"url": "u", "available": True, "scrapes": 2, "histograms": {}, "gauges": {},
            "absent": ["vllm:time_to_first_token_seconds"]}
    assert format_server_metrics(bare).splitlines() == [
        "server /metrics (2 scrapes; histogram means exact, quantiles as their bucket): no vLLM-named metrics",
        "  absent on the server: vllm:time_to_first_token_seconds"]
