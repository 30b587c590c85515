"""A point's summary.json read as JSON values (loadgen.sweep.json_read), with the checks its readers have
always made: an absent section is empty, a section of another type a TypeError naming it."""

from __future__ import annotations

import pytest

from loadgen.sweep import PointPlan, part, point_row, section, whole
from loadgen.sweep.capacity import _too_short
from metrics.results import float_or_none, int_or_none

PLAN = PointPlan("01-rate-2", "rate", 2.0, None, None, 0.0, 0)


def test_a_section_is_an_object_or_absent() -> None:
    assert section({"requests": {"sent": 3}}, "requests") == {"sent": 3}
    assert section({}, "requests") == {}
    for bad in (None, [1, 2], 3):
        with pytest.raises(TypeError, match="requests is not a JSON object"):
            section({"requests": bad}, "requests")
    assert part({"x": None}, "x") == {} and part({"x": 0}, "x") == {}
    with pytest.raises(TypeError, match="x is not a JSON object"):
        part({"x": 3}, "x")


def test_counts_and_numbers_read_as_they_always_have() -> None:
    assert (whole(7), whole(7.9), whole(None), whole("7"), whole(True), whole([])) == (7, 7, 0, 7, 1, 0)
    with pytest.raises(TypeError):
        whole([1])
    assert (float_or_none(2), float_or_none(0.5), float_or_none(True), float_or_none("1")) == (2.0, 0.5, None, None)
    assert (int_or_none(4), int_or_none(4.0), int_or_none(False), int_or_none(None)) == (4, None, None, None)


def test_a_row_reads_the_sections_it_shows() -> None:
    row = point_row(PLAN, status="done", code=0, summary={
        "run": {"complete": True, "client_saturation": None}, "requests": {"in_window": 4, "in_window_failed": 1,
                                                                          "sent": 5},
        "goodput": {"good": 3}, "latency": {"ttft_s": {"count": 4, "p50": 0.25}, "itl_s": None}})
    assert (row.measured, row.failed, row.sent, row.good, row.complete) == (4, 1, 5, 3, True)
    assert (row.ttft_p50_s, row.itl_p50_s, row.error_rate, row.dispatch_lag_p99_s) == (0.25, None, 0.25, None)


def test_a_malformed_section_is_a_type_error_naming_it() -> None:
    with pytest.raises(TypeError, match="latency is not a JSON object"):
        point_row(PLAN, status="done", code=0, summary={"latency": 3})
    with pytest.raises(TypeError, match="requests is not a JSON object"):
        _too_short({"requests": None})
