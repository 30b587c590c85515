"""Burst-delivered streams by hand: the 10 µs bound is strict, and a section with no TPOT has no share."""

from __future__ import annotations

import numpy as np

from metrics.burst import BURST_TPOT_S, burst_delivered, burst_section


def test_a_tpot_of_exactly_ten_microseconds_is_not_a_burst() -> None:
    # "below 10 µs": 10 µs itself is decoding, just under it is delivery.
    tpot = np.array([10e-6, 9.999e-6, 10.001e-6, np.nan])
    assert burst_delivered(tpot).tolist() == [False, True, False, False]
    assert BURST_TPOT_S == 10e-6


def test_a_section_without_any_tpot_has_no_share() -> None:
    tpot = np.array([np.nan, 5e-6])
    # the one request with a TPOT is excluded: nothing to share over.
    assert burst_section(tpot, np.array([True, False])) == {
        "requests": 0, "of": 0, "share": None, "tpot_below_s": 10e-6}
    # included: 1 burst of 1 stream with a TPOT (the NaN one does not count in "of").
    assert burst_section(tpot, np.array([True, True]))["share"] == 1.0
