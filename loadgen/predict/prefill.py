"""Which steps computed each request's prompt, as the server's prefill time spans them (vLLM's
vllm:request_prefill_time_seconds: from the step that first scheduled the request to the step of its
first token), replayed from the chunk times for loadgen.predict.server_check.

The chunks mark the step of each first token but not where a prompt started: a prompt that arrives
while another's chunk fills the step's token budget waits for the next. The replay hands each step's
budget (the budget less its decodes) out first come, first served, as the reference scheduler and
vLLM's do: a request whose first token the step produced takes what its prompt still lacks; then the
requests sent before the step began (the previous step's end) take chunks in the order they were sent,
each leaving at least one token for the step of its own first token. A request's prefill steps are every
step from the one of its first chunk to the one of its first token. The chunk times see no step in
which nothing was sampled (a long prompt's chunks on an idle engine): when the steps seen cannot hold a
prompt, the rest is put in steps of its own before the first, of the budget less the decodes each.
Each step's features are those of the whole step (every prefill chunk in it, its decodes), its prefill
capped at the budget less its decodes as in loadgen.predict.steps.
"""

from __future__ import annotations

import math

from loadgen.predict.step_model import StepFeatures
from loadgen.predict.steps import Clusters, clusters
from metrics.records.record import RequestRecord


def prefill_steps(records: list[RequestRecord], *, tolerance_s: float | None = None,
                  max_batched_tokens: int | None = None) -> list[tuple[StepFeatures, ...]]:
    """Per usable request (in the order of their first tokens), the features of its prefill steps."""
    c = clusters(records, tolerance_s)
    first = {k: i for i, g in enumerate(c.groups) for _, k, j in g if j == 0}
    left = {k: max(1, (r.prompt_tokens or 0) - (r.cached_tokens or 0)) for k, r in enumerate(c.used)}
    done = {k: 0 for k in left}
    chunks: list[dict[int, int]] = []  # per step: request → prompt tokens computed in it
    decodes: list[tuple[int, int]] = []  # per step: (D, K)
    extra: dict[int, int] = {}  # tokens the steps seen could not hold, per request
    for i, g in enumerate(c.groups):
        d = sum(1 for _, _, j in g if j > 0)
        kv = sum((c.used[k].prompt_tokens or 0) + j for _, k, j in g if j > 0)
        decodes.append((d, kv))
        budget = max_batched_tokens - d if max_batched_tokens is not None else None
        taken: dict[int, int] = {}
        for _, k, j in g:
            if j == 0:
                rest = left[k] - done[k]
                share = rest if budget is None else min(rest, max(budget, 1))
                taken[k], extra[k] = share, rest - share
        if budget is not None:
            room = budget - sum(taken.values())
            start = c.groups[i - 1][-1][0] if i > 0 else float("-inf")
            waiting = sorted((_sent(c, k), k) for k in left if first[k] > i and _sent(c, k) <= start)
            for _, k in waiting:
                if room <= 0:
                    break
                n = min(room, left[k] - done[k] - 1)
                if n > 0:
                    taken[k], room = n, room - n
                    done[k] += n
        chunks.append(taken)
    features = [_features(c, taken, d, kv, max_batched_tokens) for taken, (d, kv) in zip(chunks, decodes, strict=True)]
    out: list[tuple[StepFeatures, ...]] = []
    for k in sorted(first, key=lambda k: first[k]):
        start = min((i for i, taken in enumerate(chunks) if k in taken), default=first[k])
        own = _own_steps(c.used[k], extra.get(k, 0), features[first[k]], max_batched_tokens)
        out.append((*own, *features[start:first[k] + 1]))
    return out


def _sent(c: Clusters, k: int) -> float:
    r = c.used[k]
    return r.sent_ns / 1e9 if r.sent_ns is not None else float(c.times[k][0])


def _features(c: Clusters, taken: dict[int, int], decode: int, kv: int, budget: int | None) -> StepFeatures:
    """The step's prefill chunks (each × the context after it, approximated by its prompt) and decodes."""
    prefill = sum(taken.values())
    prefill_ctx = float(sum(n * (c.used[k].prompt_tokens or 0) for k, n in taken.items()))
    if budget is not None and prefill > max(budget - decode, 0):
        scale = max(budget - decode, 0) / prefill
        prefill, prefill_ctx = round(prefill * scale), prefill_ctx * scale
    return StepFeatures(prefill, prefill_ctx, decode, kv)


def _own_steps(r: RequestRecord, tokens: int, last: StepFeatures, budget: int | None) -> list[StepFeatures]:
    """Steps no chunk marks, for `tokens` of r's prompt: chunks of the budget less the decodes."""
    if tokens <= 0 or budget is None:
        return []
    share = max(1, budget - last.decode_seqs)
    sizes = [share] * (math.ceil(tokens / share) - 1)
    sizes.append(tokens - sum(sizes))
    out, context = [], r.cached_tokens or 0
    for n in sizes:
        context += n
        out.append(StepFeatures(n, float(n * context), last.decode_seqs, last.kv_tokens))
    return out
