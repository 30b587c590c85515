"""`goodput trace inspect`'s rates: the mean over the span, the peak over the busiest window of at most
60 s, and the peak never below the mean (loadgen.workload.trace_shape)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loadgen.cli import run_cli
from loadgen.workload.trace_shape import peak_per_minute, peak_window_s
from tests.loadgen._traces import write_mooncake


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.floats(0, 600, allow_nan=False), min_size=2, max_size=60))
def test_the_peak_is_never_below_the_mean(stamps: list[float]) -> None:
    arrival = np.sort(np.array(stamps))
    span = float(arrival[-1] - arrival[0])
    peak = peak_per_minute(arrival)
    if span <= 0:
        assert peak is None
        return
    mean = (arrival.size - 1) / span * 60
    assert peak is not None and peak >= mean * (1 - 1e-9)


def test_two_bursts_just_over_a_minute_apart() -> None:
    # Half the requests at 0 s, half at 60.1 s: a 60 s window would hold only half (a peak of 50 per
    # minute against a mean of 99 / 60.1 s ≈ 98.8); the span is cut into two 30.05 s windows instead.
    arrival = np.array([0.0] * 50 + [60.1] * 50)
    assert peak_window_s(60.1) == pytest.approx(30.05)
    assert peak_per_minute(arrival) == pytest.approx(50 / 30.05 * 60)


def test_a_long_trace_uses_windows_of_a_minute() -> None:
    arrival = np.arange(0.0, 600.0, 0.5)  # 2 per second for 10 minutes, then a burst of 100 at 300 s
    arrival = np.sort(np.concatenate([arrival, np.full(100, 300.0)]))
    assert peak_window_s(float(arrival[-1])) == pytest.approx(599.5 / 10)
    assert peak_per_minute(arrival) == pytest.approx((120 + 100) / (599.5 / 10) * 60, rel=0.02)


def test_a_trace_shorter_than_a_minute_prints_a_peak_above_its_mean(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    # 40 requests in 8.1 s: the printed mean was 290.5 per minute and the peak 40 (a count, not a rate).
    rows = [{"timestamp": round(i * 8100 / 39), "input_length": 10, "output_length": 5} for i in range(40)]
    assert run_cli(["trace", "inspect", str(write_mooncake(tmp_path / "t.jsonl", rows))]) == 0
    out = capsys.readouterr().out
    assert "mean 288.9 over the span, peak 296.3 in the busiest 8.1 s" in out, out
