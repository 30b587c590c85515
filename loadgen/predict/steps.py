"""Engine steps reconstructed from one run's records, for the step-time fit (loadgen.predict.calibrate).

Every token a running sequence gets is sampled at the end of an engine step, so the steps are the
instants at which chunks arrive. Per request, chunk times come from the server's clock when it sends
them (the reference server's per-chunk `goodput.t`, seconds since the request's arrival, placed on the
client's clock at the send), else from the client's receive times. All requests' chunk times, sorted,
cluster into steps (a gap wider than `tolerance` starts the next one). For each step:

- its duration: the median, over the requests that decoded in it, of the gap since their previous
  token (a decoding sequence is in every step, so that gap is one step, measured on one clock);
- D: those decoding requests, K: their context (prompt + tokens so far);
- P: prompt tokens (less cached ones) of the requests whose first token it produced, at most the step's
  token budget less D when the budget is known (a long prompt's earlier chunks ran in earlier steps,
  which no chunk marks), PC: each of those × its prompt.

Steps where no request decoded have no measured duration and are left out. Only requests that ended ok
with one token per chunk are used.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from loadgen.predict.step_model import StepFeatures
from metrics.records.record import RequestRecord


@dataclass(frozen=True, slots=True)
class Step:
    features: StepFeatures
    duration_s: float


def chunk_times_s(r: RequestRecord) -> np.ndarray | None:
    """Absolute chunk times in seconds (server clock offsets when sent), or None when unusable."""
    if r.status != "ok" or r.sent_ns is None or len(r.chunk_ns) < 2 or r.prompt_tokens is None:
        return None
    if r.chunk_tokens is not None and any(k != 1 for k in r.chunk_tokens):
        return None
    if r.server_chunk_s is not None and len(r.server_chunk_s) == len(r.chunk_ns):
        return r.sent_ns / 1e9 + np.asarray(r.server_chunk_s, dtype=np.float64)
    return np.asarray(r.chunk_ns, dtype=np.float64) / 1e9


def reconstruct(records: list[RequestRecord], *, tolerance_s: float | None = None,
                max_batched_tokens: int | None = None) -> list[Step]:
    rows: list[tuple[float, int, int]] = []  # (time, request index, chunk index)
    times: list[np.ndarray] = []
    used: list[RequestRecord] = []
    for r in records:
        t = chunk_times_s(r)
        if t is None:
            continue
        for j, tj in enumerate(t.tolist()):
            rows.append((tj, len(used), j))
        times.append(t)
        used.append(r)
    if not rows:
        return []
    rows.sort()
    gaps = np.concatenate([np.diff(t) for t in times])
    tol = tolerance_s if tolerance_s is not None else 0.4 * float(np.median(gaps))
    steps: list[Step] = []
    start = 0
    for i in range(1, len(rows) + 1):
        if i == len(rows) or rows[i][0] - rows[i - 1][0] > tol:
            step = _step(rows[start:i], used, times, max_batched_tokens)
            if step is not None:
                steps.append(step)
            start = i
    return steps


def _step(members: list[tuple[float, int, int]], used: list[RequestRecord], times: list[np.ndarray],
          budget: int | None) -> Step | None:
    prefill = decode = kv = 0
    prefill_ctx = 0.0
    durations: list[float] = []
    for _, k, j in members:
        r = used[k]
        prompt = r.prompt_tokens or 0
        if j == 0:
            n = max(1, prompt - (r.cached_tokens or 0))
            prefill += n
            prefill_ctx += n * prompt
        else:
            decode += 1
            kv += prompt + j
            durations.append(float(times[k][j] - times[k][j - 1]))
    if not durations:
        return None
    if budget is not None and prefill > max(budget - decode, 0):
        scale = max(budget - decode, 0) / prefill
        prefill, prefill_ctx = round(prefill * scale), prefill_ctx * scale
    return Step(StepFeatures(prefill, prefill_ctx, decode, kv), float(np.median(durations)))
