"""The console's server section: histogram quantiles shown as what the buckets and the sum allow, exact
per-request figures first, each quantity once, within 100 columns."""

from __future__ import annotations

import numpy as np
import pytest

from exporters.server_console import WIDTH, format_server_section, quantile_text
from loadgen.run.scrape import parse_exposition, prometheus_section
from metrics.latency.stats import stats_block
from metrics.results import Server

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


def _text(prom: dict[str, object] | None, exact: dict[str, object] | None = None) -> str:
    return "\n".join(format_server_section(Server.from_json({**(exact or {}), "prometheus": prom})))


def test_a_quantile_inside_the_first_bucket_is_bounded_by_the_sum(queue_section: dict[str, object]) -> None:
    # 40 queue times summing to 0.24 s: at most 20 of them can be 12 ms or more (p50 ≤ 0.24 / 20), and
    # the largest is at most the whole sum.
    text = _text(queue_section)
    assert "queue   mean 6.0 ms, p50 ≤ 12 ms, p99 ≤ 240 ms  (/metrics)" in text
    assert "150.0" not in text and "297.0" not in text  # the interpolated figures the data contradicts


def test_exact_per_request_figures_replace_the_histogram(queue_section: dict[str, object]) -> None:
    exact = {"queue_s": stats_block(np.array([0.004, 0.005, 0.006, 0.009])).to_json()}
    text = _text(queue_section, exact)
    assert "queue   p50 5.5 ms, p99 8.9 ms  (per request)" in text
    assert "≤ 12 ms" not in text and text.count("queue") == 1


def test_empty_exact_block_falls_back_to_the_histogram(queue_section: dict[str, object]) -> None:
    exact = {"queue_s": stats_block(np.zeros(0)).to_json()}
    assert "queue   mean 6.0 ms" in _text(queue_section, exact)


@pytest.mark.parametrize(("value", "bucket", "expected"), [
    (0.15, [0.0, 0.3], "≤ 300 ms"),
    (4e-05, [0.0, 4e-05], "≤ 0.04 ms"),
    (0.0123456, [0.0, 0.0123456], "≤ 12.3 ms"),
    (0.052, [0.04, 0.06], "≈52.0 ms (40–60 ms)"),
    (0.15, [0.1, 0.25], "100–250 ms"),  # 2.5× wide: the interpolation is not worth printing
    (2560.0, [2560.0, None], "> 2560 s"),
    (12.0, [10.0, 20.0], "≈12.00 s (10–20 s)"),
    (None, None, "-"),
])
def test_quantile_text(value: float | None, bucket: list[float | None] | None, expected: str) -> None:
    assert quantile_text(value, bucket) == expected


def test_not_available_and_absent() -> None:
    assert format_server_section(Server.from_json(None)) == [] and format_server_section(Server.from_json({})) == []
    down = _text({"url": "http://x/metrics", "available": False, "last_failure": "refused"})
    assert down == "server (/metrics at http://x/metrics not available (refused)):"


def test_a_server_without_vllm_names_says_so() -> None:
    absent = [f"vllm:some_long_metric_name_{i}_seconds" for i in range(8)]
    bare = {"url": "u", "available": True, "scrapes": 2, "histograms": {}, "gauges": {}, "absent": absent}
    lines = format_server_section(Server.from_json({"prometheus": bare}))
    assert lines[:2] == ["server (/metrics: 2 scrapes, last − first; quantiles as the range the data allows):",
                         "  no vLLM-named metrics"]
    assert lines[2].startswith("  absent on the server: vllm:some_long_metric_name_0_seconds, ")
    assert all(len(line) <= WIDTH for line in lines) and len(lines) > 3
    assert ", ".join(x.strip().rstrip(",") for x in lines[2:]).count("vllm:") == len(absent)
