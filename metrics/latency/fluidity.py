"""Fluidity (Etalon, Agrawal et al., arXiv 2407.07000): per-token deadlines with slack banking.

The first token is due D_p after the request was sent and every later token D_d after the previous
one. A token that arrives early banks the time it saved ("slack"), which later tokens may spend; a token
that arrives late misses its own deadline plus every further D_d that elapsed, and the bank is emptied.
The per-request deadline-miss rate is missed / total deadlines; the fluidity index is 1 − miss rate.

`deadline_miss_rate` follows, step for step, the reference algorithm of the Etalon project,
`metric_utils.get_request_level_deadline_miss_rate` (project-etalon/etalon), rewritten here; the
vectorised `fluidity_index` runs the same recurrence for all requests at once, one token position per
step, and the tests hold it to the scalar version.

Token intervals come from content chunks: a chunk carrying k tokens contributes its gap and then
k − 1 zero gaps (its tokens arrived together). The first interval is c_1 − d (TTFT).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from metrics.records import RequestFrame
from metrics.units import NS_PER_S

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def deadline_miss_rate(
    intervals_s: Sequence[float], prefill_deadline_s: float, decode_deadline_s: float
) -> tuple[float, int, int]:
    """(miss rate, missed deadlines, total deadlines) of one request's token intervals.

    `intervals_s[0]` is the time to the first token, the rest the gaps between tokens. With no tokens
    there is no deadline: (0.0, 0, 0), as in the reference.
    """
    total = missed = 0
    slack = 0.0
    for i, interval in enumerate(intervals_s):
        budget = prefill_deadline_s if i == 0 else decode_deadline_s
        if interval <= budget + slack:
            slack += budget - interval
            total += 1
            continue
        # Python's float floor division, as the reference (it differs from floor(a / b) at the edges).
        if i == 0:
            late = 1 + int((interval - slack - prefill_deadline_s) // decode_deadline_s)
        else:
            late = int((interval - slack) // decode_deadline_s)
        missed += late
        total += late
        slack = 0.0
    if total == 0:
        return 0.0, 0, 0
    return missed / total, missed, total


def token_intervals(frame: RequestFrame) -> tuple[FloatArray, IntArray]:
    """Per-token intervals in seconds, CSR-style: (values, offsets of length n + 1).

    Each chunk's time is repeated once per token it carries, so a k-token chunk yields its gap then
    k − 1 zeros; a chunk with k = 0 yields nothing and its time folds into the next token's interval.
    Requests never sent get no intervals.
    """
    if frame.has_sent.all() and (frame.chunk_tok == 1).all():
        # One token per chunk: the token times are the chunk times (no 20 M-element repeat).
        times, off = frame.chunk_ns, frame.chunk_off
        per_request = frame.chunk_count
    else:
        tokens = np.maximum(frame.chunk_tok, 0)
        owner = np.repeat(np.arange(frame.n, dtype=np.int64), frame.chunk_count)
        tokens = np.where(frame.has_sent[owner], tokens, 0)
        times = np.repeat(frame.chunk_ns, tokens)
        per_request = np.bincount(np.repeat(owner, tokens), minlength=frame.n).astype(np.int64)
        off = np.concatenate(([0], np.cumsum(per_request))).astype(np.int64)
    intervals = np.diff(times, prepend=times[:1]).astype(np.float64)
    starts = off[:-1][per_request > 0]
    intervals[starts] = times[starts] - frame.sent_ns[per_request > 0]
    return intervals / NS_PER_S, off


def fluidity_index(
    frame: RequestFrame, prefill_deadline_s: float, decode_deadline_s: float, include: BoolArray
) -> FloatArray:
    """1 − deadline-miss rate per request in `include` that has at least one token; NaN elsewhere."""
    if decode_deadline_s <= 0:
        raise ValueError("fluidity decode deadline must be > 0")
    intervals, off = token_intervals(frame)
    lengths = np.diff(off)
    rows = np.flatnonzero(include & (lengths > 0))
    out = np.full(frame.n, np.nan)
    if rows.size == 0:
        return out
    # Longest first, so the requests still running at token position p are a prefix of `order`.
    order = rows[np.argsort(-lengths[rows], kind="stable")]
    starts = off[:-1][order]
    remaining = lengths[order]
    slack = np.zeros(order.size)
    total = np.zeros(order.size, dtype=np.int64)
    missed = np.zeros(order.size, dtype=np.int64)
    active = order.size
    for position in range(int(remaining[0])):
        while active and remaining[active - 1] <= position:
            active -= 1
        t = intervals[starts[:active] + position]
        s = slack[:active]
        budget = prefill_deadline_s if position == 0 else decode_deadline_s
        on_time = t <= budget + s
        if position == 0:
            late = 1 + np.floor_divide(t - s - prefill_deadline_s, decode_deadline_s)
        else:
            late = np.floor_divide(t - s, decode_deadline_s)
        late_count = np.where(on_time, 0, late).astype(np.int64)
        slack[:active] = np.where(on_time, s + budget - t, 0.0)
        total[:active] += np.where(on_time, 1, late_count)
        missed[:active] += late_count
    out[order] = 1.0 - missed / total
    return out
