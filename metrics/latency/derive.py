"""Per-request and per-gap metrics of docs/metrics.md, vectorised over a RequestFrame.

Symbols: a = intended send time, d = actual send time, c_1 … c_K = content-chunk arrival times,
k_j = tokens in chunk j, N = output tokens. Every function returns one value per request (NaN where the
metric is undefined for that request: no content chunk, never sent, N < 2 for TPOT, ...) or one value
per gap, so the summary can pick the requests it measures with one boolean mask.

These functions do not look at `status`: which requests contribute samples is the summary's choice, and
it samples only requests with status "ok" — failed and cancelled requests are counted (and stay in the
goodput denominator) but never contribute a latency sample, because the time at which a request failed
says nothing about how fast the server serves.

Results are in seconds (float64); gap arrays stay in integer nanoseconds until aggregated so that
sorting 20 M of them is a fast integer sort.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from metrics.records import RequestFrame
from metrics.units import NS_PER_S

IntArray = npt.NDArray[np.int64]
_SLICE = 1 << 20
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def has_content(frame: RequestFrame) -> BoolArray:
    """K ≥ 1: only then are TTFT and E2E defined."""
    return frame.chunk_count > 0


def first_chunk_ns(frame: RequestFrame) -> IntArray:
    """c_1 per request (0 where K = 0; mask with `has_content`)."""
    k = frame.chunk_count
    out = np.zeros(frame.n, dtype=np.int64)
    out[k > 0] = frame.chunk_ns[frame.chunk_off[:-1][k > 0]]
    return out


def last_chunk_ns(frame: RequestFrame) -> IntArray:
    """c_K per request (0 where K = 0; mask with `has_content`)."""
    k = frame.chunk_count
    out = np.zeros(frame.n, dtype=np.int64)
    out[k > 0] = frame.chunk_ns[frame.chunk_off[1:][k > 0] - 1]
    return out


def _seconds_where(ns: IntArray, valid: BoolArray) -> FloatArray:
    return np.where(valid, ns / NS_PER_S, np.nan)


def ttft_s(frame: RequestFrame) -> FloatArray:
    """TTFT = c_1 − d."""
    return _seconds_where(first_chunk_ns(frame) - frame.sent_ns, has_content(frame) & frame.has_sent)


def ttft_from_schedule_s(frame: RequestFrame) -> FloatArray:
    """TTFT from schedule = c_1 − a: includes dispatch lag, so coordinated omission cannot hide it."""
    return _seconds_where(first_chunk_ns(frame) - frame.intended_ns, has_content(frame))


def e2e_s(frame: RequestFrame) -> FloatArray:
    """E2E = c_K − d (to the last content chunk)."""
    return _seconds_where(last_chunk_ns(frame) - frame.sent_ns, has_content(frame) & frame.has_sent)


def e2e_close_s(frame: RequestFrame) -> FloatArray:
    """Stream close − d: E2E plus the trailing usage chunk, [DONE] and connection close."""
    valid = has_content(frame) & frame.has_sent & frame.has_closed
    return _seconds_where(frame.closed_ns - frame.sent_ns, valid)


def e2e_from_schedule_s(frame: RequestFrame) -> FloatArray:
    """E2E from schedule = c_K − a."""
    return _seconds_where(last_chunk_ns(frame) - frame.intended_ns, has_content(frame))


def dispatch_lag_s(frame: RequestFrame) -> FloatArray:
    """Dispatch lag = d − a: how late the client sent the request (client saturation shows here)."""
    return _seconds_where(frame.sent_ns - frame.intended_ns, frame.has_sent)


def tpot_s(frame: RequestFrame) -> FloatArray:
    """TPOT = (c_K − c_1) / (N − 1), for N ≥ 2 only (docs/metrics.md: E2E ≈ TTFT + (N − 1)·TPOT).

    One value per request, so its distribution is request-weighted — unlike ITL, which is gap-weighted.
    """
    n_out = frame.output_tokens
    valid = has_content(frame) & (n_out >= 2)  # NaN N compares False
    span = (last_chunk_ns(frame) - first_chunk_ns(frame)).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_token = span / (n_out - 1)
    return np.where(valid, per_token / NS_PER_S, np.nan)


@dataclass(slots=True)
class Gaps:
    """Inter-chunk gaps c_j − c_{j−1} (j = 2..K) of every request, CSR-style like the frame's chunks."""

    ns: IntArray  # the gap, integer ns
    tokens: npt.NDArray[np.int32] | None  # k_j of the later chunk j; None when every chunk carries one token
    off: IntArray  # request i owns ns[off[i]:off[i + 1]]; K − 1 gaps (0 when K < 2)

    @property
    def one_token_each(self) -> bool:
        return self.tokens is None

    @property
    def owner(self) -> IntArray:
        """Request index of each gap (non-decreasing)."""
        return np.repeat(np.arange(self.off.shape[0] - 1, dtype=np.int64), np.diff(self.off))


def chunk_gaps(frame: RequestFrame) -> Gaps:
    """Every ITL gap, with the token count of the chunk that ends it."""
    k = frame.chunk_count
    per_request = np.maximum(k - 1, 0)
    off = np.concatenate(([0], np.cumsum(per_request))).astype(np.int64)
    if frame.chunk_ns.shape[0] < 2:
        return Gaps(ns=np.zeros(0, dtype=np.int64), tokens=None, off=off)
    # Step i of the flat diff goes from chunk i to chunk i + 1; drop the steps into a request's first chunk.
    starts = frame.chunk_off[:-1][k > 0]
    keep = np.ones(frame.chunk_ns.shape[0] - 1, dtype=np.bool_)
    keep[starts[starts > 0] - 1] = False
    ns = np.empty(int(off[-1]), dtype=np.int64)
    at = 0
    for lo in range(0, keep.shape[0], _SLICE):  # a slice at a time: no full-size temporary diff
        hi = min(lo + _SLICE, keep.shape[0])
        step = np.diff(frame.chunk_ns[lo : hi + 1])[keep[lo:hi]]
        ns[at : at + step.shape[0]] = step
        at += step.shape[0]
    ones = bool((frame.chunk_tok == 1).all())
    tokens = None if ones else np.asarray(frame.chunk_tok[1:][keep], dtype=np.int32)
    return Gaps(ns=ns, tokens=tokens, off=off)


def itl_s(gaps: Gaps) -> FloatArray:
    """ITL per chunk, one sample per gap, in seconds."""
    return gaps.ns / NS_PER_S


def itl_token_weighted_ns(gaps: Gaps) -> tuple[FloatArray, npt.NDArray[np.int32]]:
    """ITL per token, one entry per gap: gap j split evenly over its k_j tokens (gap / k_j, ns), standing
    for k_j samples (the weights). A chunk that carried no token (k_j = 0: running usage did not move)
    has weight 0: no sample."""
    if gaps.tokens is None:
        return gaps.ns.astype(np.float64), np.ones(gaps.ns.shape[0], dtype=np.int32)
    counts = np.maximum(gaps.tokens, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_token = gaps.ns / counts
    return per_token, counts


def itl_token_ns(gaps: Gaps) -> tuple[FloatArray, IntArray]:
    """ITL per token as plain samples: gap j → k_j samples of gap/k_j (ns), and their owners."""
    per_token, counts = itl_token_weighted_ns(gaps)
    return np.repeat(per_token, counts), np.repeat(gaps.owner, counts)


def max_itl_s(gaps: Gaps, n: int) -> FloatArray:
    """Largest gap per request; NaN when the request has fewer than two chunks."""
    out = np.full(n, np.nan)
    counts = np.diff(gaps.off)
    has_gap = counts > 0
    if has_gap.any():
        out[has_gap] = np.maximum.reduceat(gaps.ns, gaps.off[:-1][has_gap]) / NS_PER_S
    return out


def stalls(gaps: Gaps, n: int, threshold_s: float) -> tuple[IntArray, FloatArray]:
    """Per request: how many gaps exceeded the stall threshold (strictly), and their total time (s)."""
    over = np.flatnonzero(gaps.ns > threshold_s * NS_PER_S)
    owner = np.searchsorted(gaps.off, over, side="right") - 1
    count = np.bincount(owner, minlength=n).astype(np.int64)
    total_ns = np.bincount(owner, weights=gaps.ns[over], minlength=n)
    return count, total_ns / NS_PER_S
