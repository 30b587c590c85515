"""The capacity driver's limits, without a server: the throughput ceiling counts every completed request
(not the measured window a queued closed loop leaves), a point with no request in its window is too
short rather than a runtime error, and the floor follows the point's length."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadgen.sweep.capacity import _too_short, with_floor
from loadgen.sweep.ceiling import completed_rate
from loadgen.sweep.points import PointLength
from metrics.capacity_search.search import SearchSettings
from metrics.records.record import RequestRecord

S = 1_000_000_000


def _closed_loop_queued_behind_its_first_wave(path: Path) -> None:
    """256 sent at 0 (before a 0.6 s warm-up), the server completing 5 per second; 2 refills sent at 1 s
    complete last, at 51.6 s: the window holds 2 requests over ~50 s."""
    records = []
    for i in range(256):
        done = int((i + 1) * 0.2 * S)
        records.append(RequestRecord(id=i, intended_ns=0, sent_ns=0, chunk_ns=[done - 1000, done], closed_ns=done))
    for j in range(2):
        done = int((257 + j) * 0.2 * S)
        records.append(RequestRecord(id=256 + j, intended_ns=S, sent_ns=S, chunk_ns=[done], closed_ns=done))
    path.write_bytes(b"".join(r.to_json() for r in records))


def test_the_ceiling_is_every_completion_over_the_point(tmp_path: Path) -> None:
    _closed_loop_queued_behind_its_first_wave(tmp_path / "records.jsonl")
    # 258 completed between the first send (0 s) and the last completion (258 × 0.2 = 51.6 s): 5 req/s.
    assert completed_rate(tmp_path) == pytest.approx(258 / 51.6)
    assert completed_rate(tmp_path / "missing") is None


def test_an_empty_window_is_too_short_not_a_runtime_error() -> None:
    assert _too_short({"requests": {"sent": 1, "in_window": 0, "failed": 0}})
    assert not _too_short({"requests": {"sent": 3, "in_window": 0, "failed": 3}})  # a server failing
    assert not _too_short({"requests": {"sent": 0, "in_window": 0, "failed": 0}})  # nothing sent at all
    assert not _too_short({"requests": {"sent": 5, "in_window": 4, "failed": 0}})


def test_the_floor_follows_the_point_length() -> None:
    settings = SearchSettings(target=0.9, start_rate=1.0)
    assert with_floor(settings, PointLength(6.0, None)).floor_rate == 2.22  # 12 requests in 5.4 s
    assert with_floor(settings, PointLength(6.0, None, warmup_s=1.0)).floor_rate == 2.4  # 12 in 5 s
    assert with_floor(settings, PointLength(None, 100)).floor_rate is None  # a count holds its count
    with pytest.raises(ValueError, match="lengthen --point-duration"):
        with_floor(SearchSettings(target=0.9, max_rate=2.0), PointLength(4.0, None))


def test_a_too_short_rate_is_drawn_as_such_not_as_undecided() -> None:
    from exporters.html.load_charts import verdict_key

    assert verdict_key("too short") == "too_short" and verdict_key("too_short") == "too_short"


def test_the_client_hint_names_the_lowest_rate_the_client_could_not_offer() -> None:
    from loadgen.sweep.capacity import _client_hint
    from metrics.results import PointRow

    rows = [PointRow.from_json(r) for r in ({"rate": 12.0, "client_saturated": True, "dispatch_lag_p99_s": 0.2},
                                            {"rate": 8.0, "client_saturated": True, "dispatch_lag_p99_s": 0.15},
                                            {"rate": 4.0, "client_saturated": False, "dispatch_lag_p99_s": 0.01})]
    line = _client_hint(rows)
    assert line.startswith("hint: the load generator could not offer 8 req/s (dispatch lag p99 150 ms")
    assert "--workers N" in line
