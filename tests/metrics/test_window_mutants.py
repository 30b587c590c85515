"""The measurement window and the throughputs over it, at their edges, against hand-worked times
(docs/metrics.md: measured when warm-up <= a < end − cool-down; the duration from the first measured send
to the last measured completion; offered and achieved rates as (count − 1) / span)."""

from __future__ import annotations

import numpy as np
import pytest

from metrics.records.frame import frame_from_records
from metrics.records.record import RequestRecord
from metrics.summary.window import Window, completion_ns, measurement_window, throughput
from tests.metrics._records import MS, rec


def _window(records: list[RequestRecord], warmup_s: float = 0.0, cooldown_s: float = 0.0,
            schedule_end_s: float | None = None) -> Window:
    return measurement_window(frame_from_records(records), warmup_s=warmup_s, cooldown_s=cooldown_s,
                              schedule_end_s=schedule_end_s)


def test_the_warm_up_edge_is_measured_and_the_cool_down_edge_is_not() -> None:
    records = [rec(i, a=a, d=a, chunks=[a + 10], closed=a + 20) for i, a in enumerate([499, 500, 8999, 9000])]
    # warm-up 0.5 s: a = 500 ms is in; end 10 s − cool-down 1 s = 9 s: a = 9000 ms is out.
    window = _window(records, warmup_s=0.5, cooldown_s=1.0, schedule_end_s=10.0)
    assert window.measured.tolist() == [False, True, True, False]
    assert (window.start_ns, window.end_ns) == (500 * MS, 9019 * MS)
    assert window.duration_s == pytest.approx(8.519)


def test_without_a_schedule_end_the_cool_down_counts_back_from_the_last_intended_time() -> None:
    records = [rec(i, a=a, d=a, chunks=[a + 10], closed=a + 20) for i, a in enumerate([0, 1000, 2000, 3000])]
    # Last intended 3 s − cool-down 1 s: a < 2 s.
    assert _window(records, cooldown_s=1.0).measured.tolist() == [True, True, False, False]
    # No cool-down: nothing cut, the last request included.
    assert _window(records).measured.tolist() == [True, True, True, True]


def test_a_negative_warm_up_or_cool_down_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^warm-up and cool-down must be >= 0$"):
        _window([rec(0)], warmup_s=-0.1)
    with pytest.raises(ValueError, match=r"^warm-up and cool-down must be >= 0$"):
        _window([rec(0)], cooldown_s=-0.1)


def test_the_window_starts_at_the_first_measured_send_and_ends_at_the_last_measured_completion() -> None:
    records = [
        rec(0, a=0, d=None, chunks=[], n=0, status="error", error_kind="connect_error"),  # never sent, no end
        rec(1, a=100, d=130, chunks=[200, 250]),  # no close: completes at its last chunk, 250 ms
        rec(2, a=200, d=210, chunks=[300], closed=320),
        rec(3, a=300, d=300, chunks=[], n=0, status="error", error_kind="x"),  # no close, no chunk: unknown
        rec(4, a=5000, d=5000, chunks=[5100], closed=5200),  # warm-up? no: cut by the cool-down below
    ]
    window = _window(records, cooldown_s=1.0)  # end = 5 s − 1 s: request 4 is out
    assert window.measured.tolist() == [True, True, True, True, False]
    assert (window.start_ns, window.end_ns) == (130 * MS, 320 * MS)
    assert window.view().to_json() == {"start_s": 0.13, "end_s": 0.32, "duration_s": pytest.approx(0.19),
                                "warmup_s": 0.0, "cooldown_s": 1.0, "measured": 4}


def test_completion_is_the_close_else_the_last_chunk() -> None:
    frame = frame_from_records([
        rec(0, chunks=[10, 20], closed=25),
        rec(1, chunks=[10, 20]),
        rec(2, chunks=[], n=0, closed=5),
        rec(3, chunks=[], n=0),
        rec(4, chunks=[30]),
    ])
    done, known = completion_ns(frame)
    assert done[[0, 1, 2, 4]].tolist() == [25 * MS, 20 * MS, 5 * MS, 30 * MS]
    assert known.tolist() == [True, True, True, False, True]


def test_a_window_of_no_length_has_no_duration() -> None:
    window = _window([rec(0, a=0, d=10, chunks=[], n=0, closed=10)])
    assert (window.start_ns, window.end_ns) == (10 * MS, 10 * MS)
    assert window.duration_s is None and window.view().to_json()["duration_s"] is None
    empty = _window([])
    assert empty.view().to_json() == {"start_s": None, "end_s": None, "duration_s": None, "warmup_s": 0.0,
                               "cooldown_s": 0.0, "measured": 0}


def test_throughputs_by_hand() -> None:
    records = [
        rec(0, a=0, d=0, chunks=[100, 200], k=[1, 2], closed=1000, prompt_tokens=10),
        rec(1, a=500, d=700, chunks=[800], k=[4], closed=900, prompt_tokens=20),
        rec(2, a=1000, d=1100, chunks=[1200], k=[5], closed=1300, status="error", error_kind="x", prompt_tokens=40),
        rec(3, a=1500, d=None, chunks=[], n=0, status="error", error_kind="connect_error"),
        rec(4, a=2000, d=2000, chunks=[2100], k=[1], closed=2500),  # P unknown
    ]
    frame = frame_from_records(records)
    window = measurement_window(frame, warmup_s=0.0, cooldown_s=0.0, schedule_end_s=None)
    tp = throughput(frame, window).to_json()
    # Sends 0 … last completion 2500 ms: 2.5 s. Three successes (0, 1, 4), N = 3 + 4 + 1, P = 10 + 20 (+ unknown).
    assert tp["duration_s"] == pytest.approx(2.5)
    assert tp["requests_per_s"] == pytest.approx(3 / 2.5)
    assert tp["output_tokens_per_s"] == pytest.approx(8 / 2.5)
    assert tp["total_tokens_per_s"] == pytest.approx(38 / 2.5)
    # Intended 0 … 2000 ms, 5 requests: 4 intervals over 2 s. Sent 0, 700, 1100, 2000: 3 over 2 s.
    assert tp["offered_rps"] == pytest.approx(2.0)
    assert tp["achieved_rps"] == pytest.approx(1.5)


def test_one_request_or_one_instant_gives_no_rate() -> None:
    one = frame_from_records([rec(0, a=0, d=0, chunks=[100], closed=200)])
    tp = throughput(one, measurement_window(one, warmup_s=0.0, cooldown_s=0.0, schedule_end_s=None)).to_json()
    assert (tp["offered_rps"], tp["achieved_rps"]) == (None, None)
    assert tp["requests_per_s"] == pytest.approx(1 / 0.2)
    same = frame_from_records([rec(i, a=0, d=0, chunks=[100], closed=200) for i in range(2)])
    tp = throughput(same, measurement_window(same, warmup_s=0.0, cooldown_s=0.0, schedule_end_s=None)).to_json()
    assert (tp["offered_rps"], tp["achieved_rps"]) == (None, None)
    nothing = frame_from_records([])
    tp = throughput(nothing, measurement_window(nothing, warmup_s=0.0, cooldown_s=0.0, schedule_end_s=None)).to_json()
    assert tp == {"duration_s": None, "requests_per_s": None, "output_tokens_per_s": None,
                  "total_tokens_per_s": None, "offered_rps": None, "achieved_rps": None}
    assert np.asarray(nothing.intended_ns).size == 0


def test_two_requests_give_a_rate_however_close() -> None:
    two = frame_from_records([rec(0, a=0, d=0, chunks=[100], closed=200), rec(1, a=500, d=600, chunks=[700])])
    tp = throughput(two, measurement_window(two, warmup_s=0.0, cooldown_s=0.0, schedule_end_s=None)).to_json()
    assert (tp["offered_rps"], tp["achieved_rps"]) == (pytest.approx(2.0), pytest.approx(1 / 0.6))
    # Intended 1 ns apart: one interval in 1e-9 s.
    close = frame_from_records([rec(0, a=0, d=0, chunks=[100]), rec(1, a=1e-6, d=0, chunks=[100])])
    tp = throughput(close, measurement_window(close, warmup_s=0.0, cooldown_s=0.0, schedule_end_s=None)).to_json()
    assert tp["offered_rps"] == pytest.approx(1e9)
