from __future__ import annotations

import math

import numpy as np
import pytest

from metrics.slo import SLO, good_requests, parse_slo, slo_summary
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


def _judge_e2e(slo: SLO, e2e: list[float]) -> list[bool]:
    """Only the E2E bound varies: every other metric is far inside any bound, every request ok."""
    n = len(e2e)
    return good_requests(
        slo,
        ok_with_content=np.ones(n, dtype=bool),
        ttft_s=np.full(n, 0.001),
        tpot_s=np.full(n, 0.001),
        e2e_s=np.array(e2e),
        max_itl_s=np.full(n, 0.001),
        fluidity=np.full(n, 1.0),
    ).tolist()


def test_e2e_slo_judged_at_below_and_above_its_bound() -> None:
    # The bound as the CLI parses it ("2s" is 2.0 s exactly); the neighbours are the adjacent floats, so
    # `<` instead of `<=` fails the first case and a deleted check fails the last.
    bound = parse_slo(["e2e=2s"]).e2e_s
    assert bound == 2.0
    below, above = np.nextafter(2.0, 0.0), np.nextafter(2.0, 3.0)
    assert _judge_e2e(SLO(e2e_s=2.0), [2.0, float(below), float(above), 1.0, 30.0]) == [True, True, False, True, False]


def test_e2e_slo_is_judged_beside_the_other_bounds() -> None:
    # TTFT and TPOT met, E2E over: not good. Without an E2E bound, the same request is good.
    slo = SLO(ttft_s=0.5, tpot_s=0.05, e2e_s=1.5)
    assert _judge_e2e(slo, [1.5, 1.5000001, 3.0]) == [True, False, False]
    assert _judge_e2e(SLO(ttft_s=0.5, tpot_s=0.05), [1.5, 1.5000001, 3.0]) == [True, True, True]


def test_e2e_millisecond_bound_is_inclusive_for_the_measured_nanoseconds() -> None:
    # A request of exactly 1_250_000_000 ns against e2e=1250ms: the measurement is ns / 1e9.
    slo = parse_slo(["e2e=1250ms"])
    assert _judge_e2e(slo, [1_250_000_000 / 1e9, 1_250_000_001 / 1e9]) == [True, False]


def test_empty_items_are_skipped_not_the_end_of_the_list() -> None:
    assert parse_slo(["ttft=1s,,tpot=20ms", " , e2e=3s"]) == SLO(ttft_s=1.0, tpot_s=0.02, e2e_s=3.0)


def test_the_value_is_everything_after_the_first_equals_sign() -> None:
    with pytest.raises(ValueError) as info:
        parse_slo(["ttft=1s=2s"])
    assert str(info.value).startswith("invalid SLO ttft='1s=2s'")


def test_error_messages_are_whole_sentences() -> None:
    with pytest.raises(ValueError) as info:
        parse_slo(["speed=1s"])
    assert str(info.value) == ("unknown SLO key 'speed' in 'speed=1s': expected one of ttft, ttfo, tpot, e2e, itl_max, "
                               "max_itl, fluidity, fluidity_prefill, fluidity_prefill_deadline, fluidity_decode, "
                               "fluidity_decode_deadline")
    with pytest.raises(ValueError) as info:
        parse_slo(["fluidity=0.9"])
    assert str(info.value) == ("fluidity SLO needs per-token deadlines: add fluidity_prefill=... and "
                               "fluidity_decode=... (or ttft=... and tpot=..., which they default to)")


def test_fluidity_bound_is_in_the_half_open_unit_interval() -> None:
    # (0, 1]: 1 is a valid (strict) bound, 0 is not a bound at all.
    assert parse_slo(["fluidity=1", "ttft=1s", "tpot=50ms"]).fluidity_min == 1.0
    with pytest.raises(ValueError, match=r"must be in \(0, 1\]"):
        parse_slo(["fluidity=0", "ttft=1s", "tpot=50ms"])


def test_slo_summary_lists_every_bound_and_the_deadlines_used() -> None:
    assert slo_summary(parse_slo(["ttft=300ms", "tpot=20ms", "fluidity=0.95"])) == {
        "ttft_s": 0.3, "tpot_s": 0.02, "e2e_s": None, "itl_max_s": None, "fluidity_min": 0.95,
        "fluidity_prefill_deadline_s": None, "fluidity_decode_deadline_s": None,
        "fluidity_deadlines_s": [0.3, 0.02],
    }
    assert slo_summary(SLO(e2e_s=2.0))["fluidity_deadlines_s"] is None


def test_a_failed_request_within_the_e2e_bound_is_not_good() -> None:
    good = good_requests(SLO(e2e_s=2.0), ok_with_content=np.array([False, True]), ttft_s=np.array([0.1, 0.1]),
                         tpot_s=np.array([0.01, 0.01]), e2e_s=np.array([1.0, 1.0]),
                         max_itl_s=np.array([0.01, 0.01]), fluidity=np.array([1.0, 1.0]))
    assert good.tolist() == [False, True]


def test_fluidity_deadlines_need_both_ends() -> None:
    # An explicit prefill deadline alone asks for fluidity; its decode deadline then comes from tpot.
    assert SLO(fluidity_prefill_deadline_s=1.0, tpot_s=0.05).fluidity_deadlines() == (1.0, 0.05)
    assert SLO(fluidity_decode_deadline_s=0.04, ttft_s=0.3).fluidity_deadlines() == (0.3, 0.04)
    # Asked for, with only one end known: no deadlines (never a half-known pair).
    assert SLO(fluidity_min=0.9, ttft_s=0.5).fluidity_deadlines() is None
    assert SLO(fluidity_min=0.9, tpot_s=0.05).fluidity_deadlines() is None


def _judge_ttfo(slo: SLO, ttfo: list[float], ok: list[bool] | None = None) -> list[bool]:
    """Only the TTFO varies: every other metric is far inside any bound."""
    n = len(ttfo)
    return good_requests(
        slo,
        ok_with_content=np.array(ok if ok is not None else [True] * n),
        ttft_s=np.full(n, 0.001),
        tpot_s=np.full(n, 0.001),
        e2e_s=np.full(n, 0.002),
        max_itl_s=np.full(n, 0.001),
        fluidity=np.full(n, 1.0),
        ttfo_s=np.array(ttfo),
    ).tolist()


def test_ttfo_slo_judged_at_below_and_above_its_bound() -> None:
    # Inclusive like every bound: the adjacent floats either side of 2 s fall on each side of it, and a
    # request that never answered (NaN TTFO) misses it.
    below, above = float(np.nextafter(2.0, 0.0)), float(np.nextafter(2.0, 3.0))
    assert _judge_ttfo(parse_slo(["ttfo=2s"]), [2.0, below, above, math.nan]) == [True, True, False, False]


def test_ttfo_slo_never_makes_a_failed_request_good() -> None:
    # The bound narrows the good set; it never adds to it (a failed request within it stays not good).
    assert _judge_ttfo(SLO(ttfo_s=1.0), [0.5, 0.5, 1.5], ok=[False, True, True]) == [False, True, False]


def test_a_ttfo_slo_without_the_requests_ttfo_is_refused() -> None:
    with pytest.raises(ValueError) as info:
        good_requests(SLO(ttfo_s=1.0), ok_with_content=np.array([True]), ttft_s=np.array([0.1]),
                      tpot_s=np.array([0.01]), e2e_s=np.array([0.2]), max_itl_s=np.array([0.01]),
                      fluidity=np.array([1.0]))
    assert str(info.value) == "a TTFO SLO needs the requests' TTFO"
    # Without a TTFO bound the argument is not needed, and given it changes nothing.
    assert _judge_ttfo(SLO(ttft_s=1.0), [math.nan, 99.0]) == [True, True]
