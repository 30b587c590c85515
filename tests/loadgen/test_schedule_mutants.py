"""The run's schedule (loadgen.workload.schedule): what mutation testing found unguarded (docs/testing.md).
Offsets are worked out by hand from the trace's timestamps or rebuilt from the seed's own draws."""

from __future__ import annotations

import numpy as np
import pytest

from loadgen.spec.sections import LoadSpec
from loadgen.workload.arrivals import Arrival
from loadgen.workload.schedule import run_schedule, trace_offsets
from loadgen.workload.traces import Trace

HORIZON_S = 366 * 86_400.0  # the longest schedule a run accepts: 366 days, as its refusal says


def trace_of(*arrival_s: float) -> Trace:
    n = len(arrival_s)
    ones = np.ones(n, dtype=np.int64)
    return Trace(path="t.jsonl", format="mooncake", arrival_s=np.array(arrival_s, dtype=np.float64),
                 input_tokens=ones, output_tokens=ones)


def trace_load(**kw: object) -> LoadSpec:
    args: dict[str, object] = {"arrival": Arrival("trace"), "requests": None}
    args.update(kw)
    return LoadSpec(**args)  # type: ignore[arg-type]


def test_an_empty_window_has_no_offsets() -> None:
    assert trace_offsets(np.array([], dtype=np.float64)).size == 0
    with pytest.raises(ValueError, match=r"^--rate cannot rescale a trace window whose requests all arrive at one instant$"):
        trace_offsets(np.array([], dtype=np.float64), rate=2.0)


def test_rescaling_needs_two_distinct_instants() -> None:
    with pytest.raises(ValueError, match="all arrive at one instant"):
        trace_offsets(np.array([5.0, 5.0]), rate=2.0)
    # Two requests 1 s apart: mean rate 1/s; at 2/s the gap halves.
    assert trace_offsets(np.array([3.0, 4.0]), rate=2.0).tolist() == [0.0, 0.5]


def test_a_trace_is_rescaled_to_the_asked_rate() -> None:
    # Six requests over 5 s: mean rate 5 intervals / 5 s = 1/s; at 2/s every offset halves.
    schedule = run_schedule(trace_load(arrival=Arrival("trace", rate=2.0)), trace_of(0, 1, 2, 3, 4, 5))
    assert schedule is not None and schedule.offsets.tolist() == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]


def test_the_duration_excludes_an_offset_exactly_at_its_end() -> None:
    schedule = run_schedule(trace_load(duration_s=2.0), trace_of(0, 1, 2, 3))
    assert schedule is not None and schedule.offsets.tolist() == [0.0, 1.0]
    assert schedule.rows is not None and schedule.rows.tolist() == [0, 1]


def test_an_empty_window_names_the_trace_span() -> None:
    with pytest.raises(ValueError) as refused:
        run_schedule(trace_load(trace_start_s=60.0), trace_of(1, 2, 3, 6))
    assert str(refused.value) == ("t.jsonl: no request in the window of --trace-start/--trace-duration "
                                  "(the trace spans 5.0 s)")


def test_a_trace_arrival_needs_a_trace() -> None:
    with pytest.raises(ValueError) as refused:
        run_schedule(trace_load())
    assert str(refused.value) == "--arrival trace needs --trace FILE"


def test_the_horizon_is_inclusive_and_named_by_what_stretched_the_schedule() -> None:
    at_horizon = run_schedule(trace_load(), trace_of(0.0, HORIZON_S))
    assert at_horizon is not None and at_horizon.end_s == HORIZON_S
    with pytest.raises(ValueError) as replay:
        run_schedule(trace_load(time_scale=1e-9), trace_of(0.0, 5000.0))
    assert str(replay.value) == ("the replay (--time-scale or --rate): the last request would leave after "
                                 "5e+12 s, more than 366 days")
    with pytest.raises(ValueError) as drawn:
        run_schedule(LoadSpec(arrival=Arrival("constant", rate=1e-9), requests=2))
    assert str(drawn.value) == "--rate 1e-09: the last request would leave after 1e+09 s, more than 366 days"


def test_a_closed_loop_has_no_schedule() -> None:
    assert run_schedule(LoadSpec(arrival=Arrival("concurrency", concurrency=2), requests=5)) is None


def test_a_drawn_schedule_uses_the_seed_the_count_and_the_duration() -> None:
    # Poisson at 4/s from seed 3: gaps are the seed's Exp(1) draws / 4; request 0 at 0, request i after i gaps.
    gaps = np.random.default_rng(3).standard_exponential(2000) / 4.0
    hand = np.concatenate(([0.0], np.cumsum(gaps[:-1])))
    counted = run_schedule(LoadSpec(arrival=Arrival("poisson", rate=4.0), requests=5, duration_s=100.0, seed=3))
    assert counted is not None and counted.offsets.tolist() == pytest.approx(hand[:5].tolist(), abs=1e-12)
    timed = run_schedule(LoadSpec(arrival=Arrival("poisson", rate=4.0), requests=1000, duration_s=1.0, seed=3))
    assert timed is not None and timed.offsets.tolist() == pytest.approx(hand[hand < 1.0].tolist(), abs=1e-12)
