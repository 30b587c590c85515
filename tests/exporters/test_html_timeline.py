"""The over-time data of the HTML report, each series held to a count from first principles, and the
scatter thinning that only touches what is drawn."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from exporters.html import timeline as tl
from exporters.html.downsample import thin_scatter
from exporters.html.run_data import RunData
from metrics.records.frame import OK, frame_from_records
from tests.exporters._html_runs import sample_run


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunData, dict[str, Any]]:
    return sample_run(tmp_path_factory.mktemp("timeline") / "run", n=300, error_every=5)


def test_bins_are_nice_and_cover_the_span() -> None:
    assert tl.nice_width(60.0, 120) == 0.5
    assert tl.nice_width(1.0, 120) == 0.01
    bins = tl.make_bins(0.37, 12.3, 120)
    assert bins.start_s <= 0.37 and bins.edges[-1] > 12.3
    assert bins.count <= 121 and bins.width_s in (0.1, 0.2)
    exact = tl.make_bins(0.0, 10.0, 10)  # the end on an edge still falls inside the last bin
    assert exact.edges[-1] > 10.0


def test_request_rates_count_every_request_once(run: tuple[RunData, dict[str, Any]]) -> None:
    data, _ = run
    f = data.frame
    bins = tl.make_bins(*tl.time_span(f))
    rates = tl.request_rates(f, bins)
    counts = {k: round(float(v.sum() * bins.width_s)) for k, v in rates.items()}
    assert counts == {"scheduled": f.n, "sent": int(f.has_sent.sum()), "finished ok": int((f.status == OK).sum()),
                      "failed or cancelled": int((f.status != OK).sum())}
    good = tl.good_rate(f, data.good, bins)
    assert round(float(good.sum() * bins.width_s)) == int(data.good.sum())


def test_token_rate_bins_every_chunk_at_its_arrival(run: tuple[RunData, dict[str, Any]]) -> None:
    data, _ = run
    f = data.frame
    bins = tl.make_bins(*tl.time_span(f), target=37)
    rate = tl.token_rate(f, bins)
    assert rate.sum() * bins.width_s == pytest.approx(float(f.chunk_tok.sum()))
    t = f.chunk_ns / 1e9
    for i in (0, bins.count // 3, bins.count // 2):
        lo, hi = bins.edges[i], bins.edges[i + 1]
        inside = (t >= lo) & (t < hi)
        assert rate[i] * bins.width_s == pytest.approx(float(f.chunk_tok[inside].sum()))


def test_in_flight_mean_integrates_to_the_time_requests_spent_in_flight(run: tuple[RunData, dict[str, Any]]) -> None:
    data, _ = run
    bins = tl.make_bins(*tl.time_span(data.frame), target=50)
    peak, mean = tl.in_flight(data.frame, bins)
    start, end = tl.in_flight_intervals(data.frame)
    assert float(mean.sum() * bins.width_s) == pytest.approx(float((end - start).sum()), rel=1e-9)
    # The peak of each bin, by brute force: the level at every instant an interval starts inside the bin
    # (the level only rises there), and at the bin's left edge.
    for i in range(bins.count):
        lo, hi = bins.edges[i], bins.edges[i + 1]
        moments = [lo, *start[(start >= lo) & (start < hi)].tolist()]
        level = max(int(((start <= m) & (end > m)).sum()) for m in moments)
        assert peak[i] == level, i
    assert peak.max() >= 2  # the fixture overlaps requests: the check above saw levels above 1


def test_failures_by_kind_match_summary_errors(run: tuple[RunData, dict[str, Any]]) -> None:
    data, summary = run
    bins = tl.make_bins(*tl.time_span(data.frame))
    kinds = tl.failures_by_kind(data.frame, bins)
    assert {k: round(float(v.sum())) for k, v in kinds.items()} == summary["requests"]["errors"]


def test_rolling_percentiles_are_exact_over_each_window() -> None:
    rng = np.random.default_rng(3)
    t = np.sort(rng.uniform(0, 100, 2000))
    v = rng.lognormal(0, 1, 2000)
    v[::13] = np.nan  # no sample
    centers, rolling = tl.rolling_percentiles(t, v, window_s=5.0, points=40, percentiles=(50.0, 99.0))
    assert centers.shape == (40,)
    for i, c in enumerate(centers):
        inside = (t >= c - 2.5) & (t < c + 2.5) & ~np.isnan(v)
        assert rolling[50.0][i] == pytest.approx(np.percentile(v[inside], 50))
        assert rolling[99.0][i] == pytest.approx(np.percentile(v[inside], 99))
    _, sparse = tl.rolling_percentiles(t[:6], v[:6], window_s=0.001, points=3)
    assert np.isnan(sparse[50.0]).all()  # fewer than ROLLING_MIN_SAMPLES in every window


def test_rolling_window_widens_for_small_runs() -> None:
    assert tl.rolling_window_s(100.0, 100_000) == pytest.approx(5.0)
    assert tl.rolling_window_s(100.0, 50) == pytest.approx(50.0)
    assert tl.rolling_window_s(100.0, 10) == pytest.approx(100.0)


def test_scatter_keeps_every_point_that_fits() -> None:
    x = np.array([3.0, 1.0, 2.0, np.nan])
    y = np.array([1.0, np.nan, 5.0, 2.0])
    assert thin_scatter(x, y, 10).tolist() == [2, 0]  # NaN points are never drawn; ascending in x


def test_scatter_beyond_the_budget_keeps_each_slices_spike() -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1000, 50_000)
    y = rng.exponential(1.0, 50_000)
    keep = thin_scatter(x, y, 2000, slices=100)
    assert keep.shape[0] == 2000 and np.all(np.diff(x[keep]) >= 0)
    assert int(np.argmax(y)) in set(keep.tolist())
    slice_of = np.minimum((x / 10.0).astype(int), 99)
    for s in range(100):
        mine = np.flatnonzero(slice_of == s)
        assert mine[np.argmax(y[mine])] in set(keep.tolist())
    assert np.array_equal(keep, thin_scatter(x, y, 2000, slices=100))  # seeded: the same page twice


def test_time_span_of_an_empty_run() -> None:
    assert tl.time_span(frame_from_records([])) == (0.0, 1.0)
