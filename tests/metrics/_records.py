"""Hand-made RequestRecords for golden tests: times written in milliseconds, stored as ns."""

from __future__ import annotations

from typing import Any

from metrics.records.record import RequestRecord

MS = 1_000_000


def rec(
    rid: int = 0,
    *,
    a: float = 0.0,
    d: float | None = 0.0,
    chunks: list[float] | None = None,
    k: list[int] | None = None,
    n: int | None = None,
    closed: float | None = None,
    status: str = "ok",
    **fields: Any,
) -> RequestRecord:
    """A record with intended time `a`, send time `d` and content-chunk times `chunks`, all in ms.

    The client has already dropped role-only, usage-only and keep-alive events, so `chunks` lists
    content chunks only. `n` defaults to Σk (or K when `k` is None), reported by the server.
    """
    times = [round(c * MS) for c in chunks or []]
    if n is None:
        n = sum(k) if k is not None else len(times)
    base: dict[str, Any] = {
        "id": rid,
        "intended_ns": round(a * MS),
        "sent_ns": None if d is None else round(d * MS),
        "status": status,
        "chunk_ns": times,
        "chunk_tokens": k,
        "token_source": "server" if k is not None else "final_only",
        "output_tokens": n,
        "output_tokens_estimated": False,
        "closed_ns": None if closed is None else round(closed * MS),
    }
    base.update(fields)
    return RequestRecord(**base)
