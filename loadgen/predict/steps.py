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

Steps where no request decoded have no measured duration and are left out of `reconstruct`; their
features still place each request's prefill (loadgen.predict.prefill, for the server's prefill time).
Only requests that ended ok with one token per chunk are used (`unusable_reason` says why one is not).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from loadgen.predict.step_model import StepFeatures
from metrics.records import RequestRecord

# token_source values that measured each chunk's tokens (or split a final count the chunks can be held to)
MEASURED_SPLITS = ("usage_delta", "server", "final_split_by_tokenizer", "final_split_by_text_length")
SEVERAL_TOKENS = "carried several tokens in a chunk"
UNKNOWN_TOKENS = "had no count of tokens per chunk (the server sent no usage)"


@dataclass(frozen=True, slots=True)
class Step:
    features: StepFeatures
    duration_s: float


Row = tuple[float, int, int]  # (time, request index, chunk index)


@dataclass(frozen=True, slots=True)
class Clusters:
    """A run's chunks grouped into steps: `groups` of rows, in time order, over the `used` requests."""

    groups: list[list[Row]]
    used: list[RequestRecord]
    times: list[np.ndarray]


def unusable_reason(r: RequestRecord) -> str | None:
    """Why a record's chunk times cannot mark engine steps; None when they can."""
    if r.status != "ok" or r.sent_ns is None:
        return "did not end ok"
    if len(r.chunk_ns) < 2:
        return "had fewer than two content chunks"
    if r.prompt_tokens is None:
        return "had no prompt token count"
    if r.chunk_tokens is not None:
        if any(k != 1 for k in r.chunk_tokens):
            return SEVERAL_TOKENS
        if r.token_source not in MEASURED_SPLITS:
            return UNKNOWN_TOKENS
    elif r.output_tokens_estimated or r.output_tokens is None:
        return UNKNOWN_TOKENS
    elif r.output_tokens > len(r.chunk_ns):
        return SEVERAL_TOKENS
    elif r.output_tokens < len(r.chunk_ns):
        return "had fewer tokens than content chunks"
    return None


def unusable_counts(records: list[RequestRecord]) -> Counter[str]:
    return Counter(reason for r in records if (reason := unusable_reason(r)) is not None)


def chunk_times_s(r: RequestRecord) -> np.ndarray | None:
    """Absolute chunk times in seconds (server clock offsets when sent), or None when unusable."""
    if unusable_reason(r) is not None or r.sent_ns is None:
        return None
    if r.server_chunk_s is not None and len(r.server_chunk_s) == len(r.chunk_ns):
        return r.sent_ns / 1e9 + np.asarray(r.server_chunk_s, dtype=np.float64)
    return np.asarray(r.chunk_ns, dtype=np.float64) / 1e9


def clusters(records: list[RequestRecord], tolerance_s: float | None = None) -> Clusters:
    rows: list[Row] = []
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
        return Clusters([], used, times)
    rows.sort()
    gaps = np.concatenate([np.diff(t) for t in times])
    tol = tolerance_s if tolerance_s is not None else 0.4 * float(np.median(gaps))
    groups: list[list[Row]] = []
    start = 0
    for i in range(1, len(rows) + 1):
        if i == len(rows) or rows[i][0] - rows[i - 1][0] > tol:
            groups.append(rows[start:i])
            start = i
    return Clusters(groups, used, times)


def reconstruct(records: list[RequestRecord], *, tolerance_s: float | None = None,
                max_batched_tokens: int | None = None) -> list[Step]:
    c = clusters(records, tolerance_s)
    steps: list[Step] = []
    for members in c.groups:
        durations = [float(c.times[k][j] - c.times[k][j - 1]) for _, k, j in members if j > 0]
        if durations:
            steps.append(Step(_features(members, c.used, max_batched_tokens), float(np.median(durations))))
    return steps


def _features(members: list[Row], used: list[RequestRecord], budget: int | None) -> StepFeatures:
    prefill = decode = kv = 0
    prefill_ctx = 0.0
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
    if budget is not None and prefill > max(budget - decode, 0):
        scale = max(budget - decode, 0) / prefill
        prefill, prefill_ctx = round(prefill * scale), prefill_ctx * scale
    return StepFeatures(prefill, prefill_ctx, decode, kv)


def batch_at(records: list[RequestRecord], instants_s: list[float], *,
             tolerance_s: float | None = None) -> list[float]:
    """The batch the chunk times imply at each instant: the sequences of the step in progress (the first
    step ending after it: its decodes and the prompts it finished), 0 when no usable request is in flight
    (sent, last token not yet out)."""
    c = clusters(records, tolerance_s)
    ends = [g[-1][0] for g in c.groups]
    spans = [(r.sent_ns / 1e9 if r.sent_ns is not None else t[0], float(t[-1])) for r, t in zip(c.used, c.times,
                                                                                              strict=True)]
    out: list[float] = []
    for t in instants_s:
        if not any(a <= t < b for a, b in spans):
            out.append(0.0)
            continue
        i = int(np.searchsorted(ends, t, side="right"))
        out.append(float(len(c.groups[i])) if i < len(c.groups) else 0.0)
    return out


def no_steps_message(records: list[RequestRecord]) -> str:
    """Why no engine step can be timed, in one line (the counts of each reason a request is unusable)."""
    counts = unusable_counts(records)
    if not records:
        return "no request in the runs' records.jsonl: nothing to calibrate from"
    reasons = ", ".join(f"{n} {why}" for why, n in counts.most_common())
    merged = ("; chunks of several tokens were merged by the client or the server (a saturated client that "
              "reads several chunks as one, a server that batches chunks or decodes speculatively)"
              if counts[SEVERAL_TOKENS] else "")
    return (f"no engine step can be timed: of {len(records)} requests, {reasons}. calibrate needs requests that "
            f"end ok with each chunk's tokens counted by the server (per-chunk usage, which goodput run asks "
            f"for by default, or per-chunk times){merged}; the server's histograms alone give means per run, "
            f"not steps, and are not fitted")
