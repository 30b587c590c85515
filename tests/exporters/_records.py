"""Random but plausible RequestRecords for exporter tests (seeded; times in integer ns)."""

from __future__ import annotations

import numpy as np

from metrics.records.record import RequestRecord

MS = 1_000_000


def random_records(n: int, *, seed: int = 0, error_every: int = 0, scenario: str | None = "chat") -> list[RequestRecord]:
    """`n` requests 50 ms apart: lognormal TTFT (~80 ms), 2–40 chunks of 1–3 tokens with ~15 ms gaps.

    Every `error_every`-th request (when > 0) fails with an HTTP 500 and no chunks.
    """
    rng = np.random.default_rng(seed)
    out: list[RequestRecord] = []
    for i in range(n):
        a = i * 50 * MS
        d = a + int(rng.integers(10_000, 300_000))
        tags = {"scenario": scenario} if scenario else {}
        prompt = int(rng.choice([100, 300, 1000, 3000]))
        if error_every and i % error_every == error_every - 1:
            out.append(RequestRecord(id=i, intended_ns=a, sent_ns=d, status="error", error_kind="http_status",
                                     http_status=500, prompt_tokens=prompt, tags=tags, closed_ns=d + 2 * MS))
            continue
        k = int(rng.integers(2, 41))
        first = d + int(rng.lognormal(np.log(80), 0.5) * MS)
        gaps = rng.gamma(2.0, 7.5, size=k - 1) * MS
        chunk_ns = [first, *(first + np.cumsum(gaps).astype(np.int64)).tolist()]
        tokens = rng.integers(1, 4, size=k).tolist()
        cached = int(rng.choice([0, prompt // 2, prompt]))
        out.append(RequestRecord(
            id=i, intended_ns=a, sent_ns=d, status="ok", chunk_ns=chunk_ns, chunk_tokens=tokens,
            token_source="server", output_tokens=sum(tokens), output_tokens_estimated=False,
            prompt_tokens=prompt, prompt_tokens_estimated=False, cached_tokens=cached, finish_reason="length",
            closed_ns=chunk_ns[-1] + MS, tags=tags,
        ))
    return out
