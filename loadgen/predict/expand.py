"""Chunks that carry several tokens, split into one token each, for the step reconstruction
(loadgen.predict.steps reads one token per chunk, one chunk per engine step).

A server sends a chunk once its text decodes: a byte-level tokenizer holds back the bytes of a character
split across tokens, a BPE detokenizer the tokens of a word, so a chunk can carry k tokens, made in the k
engine steps since the previous chunk. A decoding sequence is in every step, so those steps lie evenly
between the two chunks on average: the k tokens are placed at the previous chunk's time + i/k of the gap
(i = 1..k), the last at the chunk's own time. A first chunk of k tokens has no previous chunk: its earlier
tokens are placed one median gap of the request's later tokens apart, before it. Requests with every
chunk of one token, or without a count per chunk, are returned as they are.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from metrics.records import RequestRecord


def _spread(times: np.ndarray, tokens: np.ndarray, first_gap: float) -> np.ndarray:
    """Per-token times from per-chunk times and token counts (see the module docstring)."""
    out: list[float] = []
    prev = float(times[0])
    for j, (t, k) in enumerate(zip(times.tolist(), tokens.tolist(), strict=True)):
        step = first_gap if j == 0 else (t - prev) / k
        out.extend(t - (k - i) * step for i in range(1, k + 1))
        prev = t
    return np.asarray(out, dtype=np.float64)


def one_token_per_chunk(r: RequestRecord) -> RequestRecord:
    """The record with every chunk of k > 1 tokens split into k chunks of one (unchanged when none is)."""
    if r.chunk_tokens is None or len(r.chunk_tokens) != len(r.chunk_ns) or all(k == 1 for k in r.chunk_tokens):
        return r
    if any(k < 1 for k in r.chunk_tokens):
        return r
    tokens = np.asarray(r.chunk_tokens, dtype=np.int64)
    ns = np.asarray(r.chunk_ns, dtype=np.float64)
    gaps = np.diff(ns) / tokens[1:] if ns.size > 1 else np.zeros(0)
    first_gap = float(np.median(gaps)) if gaps.size else 0.0
    chunk_ns = [round(t) for t in _spread(ns, tokens, first_gap).tolist()]
    server = r.server_chunk_s
    if server is not None and len(server) == len(r.chunk_ns):
        s = np.asarray(server, dtype=np.float64)
        s_gaps = np.diff(s) / tokens[1:] if s.size > 1 else np.zeros(0)
        server = _spread(s, tokens, float(np.median(s_gaps)) if s_gaps.size else 0.0).tolist()
    return dataclasses.replace(r, chunk_ns=chunk_ns, server_chunk_s=server, chunk_tokens=[1] * len(chunk_ns))


def split_chunks(records: list[RequestRecord]) -> list[RequestRecord]:
    return [one_token_per_chunk(r) for r in records]
