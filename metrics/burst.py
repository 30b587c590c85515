"""Burst-delivered streams: output that reached the client all at once, so its chunk times say nothing
about how fast the server decoded (docs/metrics.md, burst-delivered streams).

A busy server (or a proxy that buffers) may hold a whole answer and send it in one write: the client then
reads every chunk in one go, the gaps are 0, TPOT is 0 and TTFT is the whole latency. goodput calls a
stream *burst-delivered* when it has a TPOT (K ≥ 1, N ≥ 2) below BURST_TPOT_S: its tokens arrived less
than 10 µs apart on average. No server decodes a token for one request that fast; what the client
measures there is the transfer of bytes that were already waiting (the client stamps reads, not events,
and the reads of bytes already in the socket follow each other within microseconds).

Such a TPOT is below what the client can resolve, so it is never taken as meeting a TPOT bound
(metrics.slo.good_requests), and summary.json counts these streams (`burst_delivered`).
"""

from __future__ import annotations

from typing import TypedDict

import numpy as np
import numpy.typing as npt

BURST_TPOT_S = 10e-6  # a TPOT below this is delivery, not decoding

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def burst_delivered(tpot_s: FloatArray) -> BoolArray:
    """Per request: its TPOT is below BURST_TPOT_S (False where TPOT is undefined)."""
    with np.errstate(invalid="ignore"):
        return np.asarray(tpot_s < BURST_TPOT_S, dtype=np.bool_)  # NaN compares False


class BurstSection(TypedDict):
    """summary.json's `burst_delivered`."""

    requests: int  # burst-delivered
    of: int  # included requests with a TPOT
    share: float | None  # requests / of; None when no request had a TPOT
    tpot_below_s: float  # BURST_TPOT_S


def burst_section(tpot_s: FloatArray, include: BoolArray) -> BurstSection:
    """summary.json `burst_delivered`: over the included requests that have a TPOT, how many were
    burst-delivered."""
    has_tpot = include & ~np.isnan(tpot_s)
    bursts = int((has_tpot & burst_delivered(tpot_s)).sum())
    streams = int(has_tpot.sum())
    return {"requests": bursts, "of": streams, "share": bursts / streams if streams else None,
            "tpot_below_s": BURST_TPOT_S}
