from __future__ import annotations

import numpy as np
import pytest

from metrics.slo import SLO, good_requests, parse_slo
from metrics.units import parse_duration


def test_parse_units_and_bare_seconds() -> None:
    slo = parse_slo(["ttft=500ms", "tpot=50000us", "e2e=2", "itl_max=0.2s"])
    assert slo == SLO(ttft_s=0.5, tpot_s=0.05, e2e_s=2.0, itl_max_s=0.2)


def test_parse_comma_separated_and_fluidity_with_deadlines() -> None:
    slo = parse_slo(["fluidity=0.9,fluidity_prefill=1s", "fluidity_decode=40ms"])
    assert slo.fluidity_min == 0.9
    assert slo.fluidity_deadlines() == (1.0, 0.04)


def test_fluidity_deadlines_default_to_ttft_and_tpot() -> None:
    assert parse_slo(["ttft=300ms", "tpot=20ms", "fluidity=0.95"]).fluidity_deadlines() == (0.3, 0.02)


def test_millisecond_bound_equals_measured_nanoseconds() -> None:
    # Inclusive bounds need the parsed bound to be the very float the measurement produces.
    assert parse_duration("50ms") == 50_000_000 / 1e9
    assert parse_duration("1.1ms") == 1_100_000 / 1e9


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("ttft", "expected key=value"),
        ("ttft=", "expected key=value"),
        ("latency=1s", "unknown SLO key 'latency'"),
        ("ttft=fast", "invalid SLO ttft='fast'"),
        ("ttft=-5ms", "invalid SLO ttft='-5ms'"),
        ("ttft=0", "must be > 0"),
        ("ttft=5min", "invalid SLO ttft='5min'"),
        ("fluidity=1.5", "must be in (0, 1]"),
        ("fluidity=high", "between 0 and 1"),
        ("fluidity=0.9", "needs per-token deadlines"),
    ],
)
def test_parse_errors(spec: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_slo([spec])
    assert message in str(info.value)


def test_repeated_key_is_an_error() -> None:
    with pytest.raises(ValueError, match="given twice"):
        parse_slo(["ttft=1s", "ttft=2s"])
    with pytest.raises(ValueError, match="given twice"):
        parse_slo(["itl_max=1s,max_itl=2s"])


def test_good_requests_inclusive_and_not_applicable() -> None:
    nan = np.nan
    slo = SLO(ttft_s=0.5, tpot_s=0.05, itl_max_s=0.2, fluidity_min=0.9)
    good = good_requests(
        slo,
        ok_with_content=np.array([True, True, True, False, True, True]),
        ttft_s=np.array([0.5, 0.5, 0.2, 0.1, 0.2, 0.2]),
        tpot_s=np.array([0.05, nan, 0.06, 0.01, 0.01, 0.01]),  # nan: N < 2, TPOT not judged
        e2e_s=np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0]),
        max_itl_s=np.array([0.2, nan, 0.1, 0.1, 0.3, 0.1]),
        fluidity=np.array([0.9, 1.0, 1.0, 1.0, 1.0, 0.8]),
    )
    # 0: every bound met exactly; 1: N = 1; 2: TPOT over; 3: failed; 4: max ITL over; 5: fluidity under.
    assert good.tolist() == [True, True, False, False, False, False]


def test_no_slo_means_every_successful_request_with_content_is_good() -> None:
    good = good_requests(
        SLO(),
        ok_with_content=np.array([True, False]),
        ttft_s=np.array([100.0, 0.1]),
        tpot_s=np.array([1.0, 0.1]),
        e2e_s=np.array([1.0, 0.1]),
        max_itl_s=np.array([1.0, 0.1]),
        fluidity=np.array([np.nan, np.nan]),
    )
    assert good.tolist() == [True, False]


def test_fluidity_is_computed_only_when_asked_for() -> None:
    assert parse_slo(["ttft=500ms", "tpot=50ms"]).fluidity_deadlines() is None
    assert parse_slo(["ttft=500ms", "tpot=50ms", "fluidity=0.9"]).fluidity_deadlines() == (0.5, 0.05)
    assert parse_slo(["fluidity_prefill=1s", "fluidity_decode=20ms"]).fluidity_deadlines() == (1.0, 0.02)
