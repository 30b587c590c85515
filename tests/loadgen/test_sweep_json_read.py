"""A point's summary.json read as JSON values (loadgen.sweep.json_read): a malformed section gives missing
figures, not a crash."""

from __future__ import annotations

from loadgen.sweep import PointPlan, int_or_none, number, point_row, section, whole
from loadgen.sweep.capacity import _too_short


def test_a_section_that_is_not_an_object_reads_as_empty() -> None:
    assert section({"requests": {"sent": 3}}, "requests") == {"sent": 3}
    assert section({"requests": None}, "requests") == {}
    assert section({"requests": [1, 2]}, "requests") == {}
    assert section({}, "requests") == {}


def test_counts_and_numbers_keep_what_a_number_holds() -> None:
    assert (whole(7), whole(7.9), whole(None), whole("7"), whole(True)) == (7, 7, 0, 0, 1)
    assert (number(2), number(0.5), number(True), number("1")) == (2.0, 0.5, None, None)
    assert (int_or_none(4), int_or_none(4.0), int_or_none(False), int_or_none(None)) == (4, None, None, None)


def test_a_malformed_summary_gives_a_row_without_figures() -> None:
    plan = PointPlan("01-rate-2", "rate", 2.0, None, None, 0.0, 0)
    row = point_row(plan, status="done", code=0, summary={"run": None, "requests": "x", "latency": {"ttft_s": 1}})
    assert (row.measured, row.failed, row.sent, row.good, row.complete, row.ttft_p50_s) == (0, 0, None, None, False, None)
    assert not _too_short({"requests": None})
