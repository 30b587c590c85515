"""The `server` section: the server's own clock, where the server stamps its chunks.

For the requests that carry `server_chunk_s` (seconds since the server received the request, per
content chunk): server TTFT (first content chunk), server ITL (gaps between its stamps), and the
client − server TTFT difference (network, queueing in the client's socket, SSE parsing). Final-chunk
phase times (queue, prefill, decode) are summarised when present. With no server timing every block is
empty (count 0, nulls) — absent is never reported as zero.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from metrics.latency import stats_block
from metrics.records import RequestFrame

if TYPE_CHECKING:  # the view is imported where a summary is made: a run imports this before its first request
    from metrics.results import Server

BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]


def server_ttft_s(frame: RequestFrame) -> FloatArray:
    """Server-side TTFT per request (NaN where the server did not stamp it)."""
    out = np.full(frame.n, np.nan)
    has = frame.has_server & (frame.chunk_count > 0)
    out[has] = frame.server_s[frame.chunk_off[:-1][has]]
    return out


def server_itl_s(frame: RequestFrame, include: BoolArray) -> FloatArray:
    """Gaps between consecutive server stamps of the requests in `include` that have them."""
    k = frame.chunk_count
    if frame.server_s.shape[0] < 2:
        return np.zeros(0)
    # Step i goes from chunk i to i + 1: keep it when chunk i + 1 is a later chunk of a chosen request.
    later = np.repeat(include & frame.has_server, k)[1:]
    starts = frame.chunk_off[:-1][k > 0]
    later[starts[starts > 0] - 1] = False
    return np.asarray(np.diff(frame.server_s)[later], dtype=np.float64)


def server_section(frame: RequestFrame, include: BoolArray, client_ttft_s: FloatArray) -> Server:
    from metrics.results import Server

    use = include & frame.has_server
    server_ttft = server_ttft_s(frame)
    blocks = {
        "ttft_s": stats_block(server_ttft[use]),
        "itl_s": stats_block(server_itl_s(frame, include)),
        "ttft_client_minus_server_s": stats_block((client_ttft_s - server_ttft)[use]),
    }
    for phase, values in frame.server_phases.items():
        blocks[phase] = stats_block(values[include])
    return Server(blocks, None, requests_with_timing=int(use.sum()))
