"""The data of the over-time charts, from every record (times in seconds since the run's anchor).

Rates are counts per time bin divided by the bin's width; in-flight is the exact step function of
sends and completions, reduced per bin to its maximum and its time average; rolling percentiles are
numpy's exact percentiles of all samples whose request was sent inside each window. Which requests feed
each series is said where it is computed; nothing here is thinned (see exporters.html.downsample).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from metrics import NS_PER_S
from metrics.records import OK, RequestFrame
from metrics.summary import completion_ns

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

TARGET_BINS = 120
_SLICE = 1 << 22  # chunks binned at a time
ROLLING_POINTS = 150
ROLLING_MIN_SAMPLES = 5  # fewer samples in a window: no rolling value there (NaN)


@dataclass(frozen=True, slots=True)
class Bins:
    """`count` bins of `width_s` from `start_s`."""

    start_s: float
    width_s: float
    count: int

    @property
    def edges(self) -> FloatArray:
        return self.start_s + self.width_s * np.arange(self.count + 1, dtype=np.float64)

    @property
    def centers(self) -> FloatArray:
        return self.start_s + self.width_s * (np.arange(self.count, dtype=np.float64) + 0.5)


def nice_width(span_s: float, target: int = TARGET_BINS) -> float:
    """The smallest of 1, 2, 5 × 10^k seconds that covers `span_s` in at most `target` bins."""
    if not span_s > 0:
        return 1.0
    raw = span_s / target
    power = 10.0 ** math.floor(math.log10(raw))
    for step in (1.0, 2.0, 5.0, 10.0):
        if step * power >= raw:
            return step * power
    return 10.0 * power


def make_bins(lo_s: float, hi_s: float, target: int = TARGET_BINS) -> Bins:
    """Bins of a nice width whose edges are multiples of it, covering [lo_s, hi_s]."""
    width = nice_width(hi_s - lo_s, target)
    start = math.floor(lo_s / width) * width
    count = max(1, math.ceil((hi_s - start) / width))
    if start + count * width <= hi_s:  # hi_s on the last edge: one more bin so that it falls inside
        count += 1
    return Bins(start, width, count)


def per_second(times_s: FloatArray, bins: Bins, weights: FloatArray | None = None) -> FloatArray:
    """Events (or their weights) per second in each bin."""
    index = np.floor((np.asarray(times_s) - bins.start_s) / bins.width_s).astype(np.int64)
    inside = (index >= 0) & (index < bins.count)
    w = None if weights is None else np.asarray(weights, dtype=np.float64)[inside]
    return np.bincount(index[inside], weights=w, minlength=bins.count)[: bins.count] / bins.width_s


def seconds(ns: IntArray) -> FloatArray:
    return np.asarray(ns, dtype=np.float64) / NS_PER_S


def finish_s(frame: RequestFrame) -> tuple[FloatArray, BoolArray]:
    """When each request ended (stream close, else its last chunk; else when it was sent, else scheduled)
    and whether that end is known from the request itself (close or chunk)."""
    done, known = completion_ns(frame)
    fallback = np.where(frame.has_sent, frame.sent_ns, frame.intended_ns)
    return seconds(np.where(known, done, fallback)), known


def time_span(frame: RequestFrame) -> tuple[float, float]:
    """From the first intended send to the last end of any request (0, 1 for an empty run)."""
    if frame.n == 0:
        return 0.0, 1.0
    end, _ = finish_s(frame)
    lo = float(min(seconds(frame.intended_ns).min(), seconds(frame.sent_ns[frame.has_sent]).min(initial=np.inf)))
    return lo, float(max(end.max(), lo))


def request_rates(frame: RequestFrame, bins: Bins) -> dict[str, FloatArray]:
    """Requests per second: scheduled (intended sends), sent, finished ok, and ended in failure or
    cancellation, every request of the run counted once in each series it belongs to."""
    end, _ = finish_s(frame)
    ok = frame.status == OK
    return {
        "scheduled": per_second(seconds(frame.intended_ns), bins),
        "sent": per_second(seconds(frame.sent_ns[frame.has_sent]), bins),
        "finished ok": per_second(end[ok], bins),
        "failed or cancelled": per_second(end[~ok], bins),
    }


def good_rate(frame: RequestFrame, good: BoolArray, bins: Bins) -> FloatArray:
    """Good requests (ok and within every SLO) per second, by when they finished."""
    end, _ = finish_s(frame)
    return per_second(end[good], bins)


def token_rate(frame: RequestFrame, bins: Bins) -> FloatArray:
    """Output tokens received per second: every content chunk of every request, failed ones included
    (the server did produce them), at its arrival time with its token count k_j.

    A large run has tens of millions of chunks: binned in integer nanoseconds, a slice at a time."""
    edges_ns = np.round(bins.edges * NS_PER_S).astype(np.int64)
    total = np.zeros(bins.count + 2)
    ones = bool((frame.chunk_tok == 1).all()) if frame.chunk_tok.size else True
    for lo in range(0, frame.chunk_ns.shape[0], _SLICE):
        chunk = frame.chunk_ns[lo : lo + _SLICE]
        # searchsorted against the edges: bin i + 1 holds [edge_i, edge_{i+1}); 0 and count + 1 are outside
        index = np.searchsorted(edges_ns, chunk, side="right")
        weights = None if ones else frame.chunk_tok[lo : lo + _SLICE]
        total += np.bincount(index, weights=weights, minlength=bins.count + 2)
    return total[1 : bins.count + 1] / bins.width_s


def in_flight_intervals(frame: RequestFrame) -> tuple[FloatArray, FloatArray]:
    """(start, end) of each request that was sent and whose end is known: sent → stream close or last chunk."""
    end, known = finish_s(frame)
    use = frame.has_sent & known
    start = seconds(frame.sent_ns[use])
    return start, np.maximum(end[use], start)


def in_flight(frame: RequestFrame, bins: Bins) -> tuple[FloatArray, FloatArray]:
    """Requests in flight per bin: the maximum and the time average of the exact step function."""
    start, end = in_flight_intervals(frame)
    edges = bins.edges
    # ∫ in-flight up to t = Σ_{s ≤ t} (t − s) − Σ_{e ≤ t} (t − e), from sorted starts and ends.
    s_sorted, e_sorted = np.sort(start), np.sort(end)
    s_cum = np.concatenate(([0.0], np.cumsum(s_sorted)))
    e_cum = np.concatenate(([0.0], np.cumsum(e_sorted)))
    n_s = np.searchsorted(s_sorted, edges, side="right")
    n_e = np.searchsorted(e_sorted, edges, side="right")
    integral = (n_s * edges - s_cum[n_s]) - (n_e * edges - e_cum[n_e])
    mean = np.diff(integral) / bins.width_s
    # The level after each event (an end before a start at the same instant), and the level entering each bin.
    times = np.concatenate((end, start))
    steps = np.concatenate((-np.ones(end.shape[0]), np.ones(start.shape[0])))
    order = np.lexsort((steps, times))
    times, level = times[order], np.cumsum(steps[order])
    entering = np.concatenate(([0.0], level))[np.searchsorted(times, edges[:-1], side="right")]
    peak = entering.copy()
    index = np.floor((times - bins.start_s) / bins.width_s).astype(np.int64)
    inside = (index >= 0) & (index < bins.count)
    np.maximum.at(peak, index[inside], level[inside])
    return peak, mean


def failures_by_kind(frame: RequestFrame, bins: Bins) -> dict[str, FloatArray]:
    """Failed and cancelled requests per bin (counts, not rates) by error kind, at the time each ended;
    kinds in descending total. The same kinds and totals as summary.json's `requests.errors`."""
    end, _ = finish_s(frame)
    bad = np.flatnonzero(frame.status != OK)
    kinds = [frame.error_kind[i] or "unknown" for i in bad.tolist()]
    out: dict[str, FloatArray] = {}
    for kind, _ in Counter(kinds).most_common():
        mine = bad[np.array([k == kind for k in kinds], dtype=np.bool_)]
        out[kind] = per_second(end[mine], bins) * bins.width_s
    return out


def rolling_percentiles(t_s: FloatArray, values: FloatArray, *, window_s: float, points: int = ROLLING_POINTS,
                        percentiles: tuple[float, ...] = (50.0, 99.0),
                        min_samples: int = ROLLING_MIN_SAMPLES) -> tuple[FloatArray, dict[float, FloatArray]]:
    """Percentiles of `values` over a window of `window_s` centred at up to `points` evenly spaced times,
    each from every sample whose time lies in [t − window/2, t + window/2); NaN where a window holds fewer
    than `min_samples`. NaN values are no sample."""
    t_s, values = np.asarray(t_s, dtype=np.float64), np.asarray(values, dtype=np.float64)
    use = ~np.isnan(values) & ~np.isnan(t_s)
    order = np.argsort(t_s[use], kind="stable")
    t, v = t_s[use][order], values[use][order]
    out = {p: np.full(0, np.nan) for p in percentiles}
    if t.shape[0] == 0:
        return np.zeros(0), out
    centers = np.linspace(float(t[0]), float(t[-1]), points) if t[-1] > t[0] else np.array([float(t[0])])
    lo = np.searchsorted(t, centers - window_s / 2, side="left")
    hi = np.searchsorted(t, centers + window_s / 2, side="left")
    result = {p: np.full(centers.shape[0], np.nan) for p in percentiles}
    for i, (a, b) in enumerate(zip(lo.tolist(), hi.tolist(), strict=True)):
        if b - a >= min_samples:
            qs = np.percentile(v[a:b], percentiles)
            for p, q in zip(percentiles, qs, strict=True):
                result[p][i] = q
    return centers, result


def rolling_window_s(span_s: float, samples: int) -> float:
    """The rolling window of a run: a twentieth of its span, widened for a small run so that a window holds
    about 25 samples on average (a rolling p99 of a handful says little); at least 1 ms."""
    share = max(1.0 / 20.0, min(1.0, 25.0 / samples)) if samples > 0 else 1.0
    return max(span_s * share, 1e-3)


def bin_target(requests: int) -> int:
    """How many time bins a run's rate charts get: about four requests a bin, 10 to TARGET_BINS."""
    return max(10, min(TARGET_BINS, requests // 4))
