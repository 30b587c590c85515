"""Which steps computed each request's prompt, as the server's prefill time spans them (vLLM's
vllm:request_prefill_time_seconds: from the step that first scheduled the request to the step of its
first token), replayed from the chunk times for loadgen.predict.server_check.

The chunks mark the step of each first token but not where a prompt started: a prompt that arrives
while another's chunk fills the step's token budget waits for the next. The replay hands each step's
room (the budget less its decodes) out first come, first served, as the reference scheduler and vLLM's
do. First the requests whose first token the step produced, in the order they were sent: together they
lack what their prompts still need; when that exceeds the room, the steps before this one that no chunk
marks (steps in which nothing was sampled: a long prompt's chunks on an idle engine) computed the
excess, each a full room, filled in send order, so the earliest-sent prompt's first tokens are in the
earliest of them and this step holds what is left. Then the requests sent before the step began (the
previous step's end) take chunks of the room left, in the order they were sent, each leaving at least
one token for the step of its own first token. A request's prefill steps are every step, marked or not,
from the one of its first chunk to the one of its first token. Each step's features are those of the
whole step: every prefill chunk in it, each × the context after it (the cached tokens and the prompt
computed so far), and the decodes of the marked step (an unmarked step is given those of the step it
precedes).

One pass over the steps, with the requests sorted once by send time and a pointer into them: linear in
the chunks, as loadgen.predict.steps.reconstruct is.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

from loadgen.predict.step_model import StepFeatures
from loadgen.predict.steps import Clusters, clusters
from metrics.records import RequestRecord


@dataclass(slots=True)
class _Step:
    decode: int
    kv: int
    prefill: int = 0
    prefill_ctx: float = 0.0

    def features(self) -> StepFeatures:
        return StepFeatures(self.prefill, self.prefill_ctx, self.decode, self.kv)


@dataclass(slots=True)
class _Replay:
    c: Clusters
    steps: list[_Step] = field(default_factory=list)
    computed: list[int] = field(default_factory=list)  # per request: prompt tokens computed so far
    begin: dict[int, int] = field(default_factory=dict)  # request → index of the step of its first chunk

    def put(self, step: int, k: int, n: int) -> None:
        """n more of request k's prompt tokens computed in steps[step]."""
        self.computed[k] += n
        s = self.steps[step]
        s.prefill += n
        s.prefill_ctx += float(n * ((self.c.used[k].cached_tokens or 0) + self.computed[k]))
        self.begin.setdefault(k, step)


@dataclass(frozen=True, slots=True)
class Prefills:
    """Per usable request (in the order of their first tokens), the features of its prefill steps, and how
    many distinct steps those are (requests of one burst share theirs)."""

    per_request: list[tuple[StepFeatures, ...]]
    steps: int


def prefill_steps(records: list[RequestRecord], *, tolerance_s: float | None = None,
                  max_batched_tokens: int | None = None) -> list[tuple[StepFeatures, ...]]:
    """Per usable request (in the order of their first tokens), the features of its prefill steps."""
    return replay(records, tolerance_s=tolerance_s, max_batched_tokens=max_batched_tokens).per_request


def replay(records: list[RequestRecord], *, tolerance_s: float | None = None,
           max_batched_tokens: int | None = None) -> Prefills:
    """The prefill steps of every usable request (module docstring)."""
    c = clusters(records, tolerance_s)
    first = [0] * len(c.used)
    for i, g in enumerate(c.groups):
        for _, k, j in g:
            if j == 0:
                first[k] = i
    left = [max(1, (r.prompt_tokens or 0) - (r.cached_tokens or 0)) for r in c.used]
    sent = [_sent(c, k) for k in range(len(c.used))]
    order = sorted(range(len(c.used)), key=lambda k: (sent[k], k))
    state = _Replay(c, computed=[0] * len(c.used))
    end: dict[int, int] = {}  # request → index of the step of its first token
    waiting: deque[int] = deque()  # sent before the current step began, first token still to come
    admitted = 0
    for i, g in enumerate(c.groups):
        d = sum(1 for _, _, j in g if j > 0)
        kv = sum((c.used[k].prompt_tokens or 0) + j for _, k, j in g if j > 0)
        room = max(max_batched_tokens - d, 1) if max_batched_tokens is not None else None
        firsts = sorted((k for _, k, j in g if j == 0), key=lambda k: (sent[k], k))
        rest = {k: left[k] - state.computed[k] for k in firsts}
        total = sum(rest.values())
        hidden = math.ceil(total / room) - 1 if room is not None and total > 0 else 0
        base = len(state.steps)
        state.steps.extend(_Step(d, kv) for _ in range(hidden + 1))
        placed = 0  # tokens placed in the hidden steps and this one, in send order
        for k in firsts:
            while rest[k] > 0:
                at = min(placed // room, hidden) if room is not None else 0
                n = rest[k] if room is None or at == hidden else min(rest[k], (at + 1) * room - placed)
                state.put(base + at, k, n)
                placed, rest[k] = placed + n, rest[k] - n
            end[k] = base + hidden
        if room is None:
            continue
        free = room - (total - hidden * room)
        start = c.groups[i - 1][-1][0] if i > 0 else float("-inf")
        while admitted < len(order) and sent[order[admitted]] <= start:
            waiting.append(order[admitted])
            admitted += 1
        keep: list[int] = []
        while waiting and free > 0:
            k = waiting.popleft()
            n = min(free, left[k] - state.computed[k] - 1) if first[k] > i else 0
            if n > 0:
                state.put(base + hidden, k, n)
                free -= n
                if left[k] - state.computed[k] > 1:
                    keep.append(k)
        waiting.extendleft(reversed(keep))
    features = [s.features() for s in state.steps]
    spans = [(state.begin.get(k, end[k]), end[k] + 1) for g in c.groups for _, k, j in g if j == 0]
    covered = {i for a, b in spans for i in range(a, b)}
    return Prefills([tuple(features[a:b]) for a, b in spans], len(covered))


def _sent(c: Clusters, k: int) -> float:
    r = c.used[k]
    return r.sent_ns / 1e9 if r.sent_ns is not None else float(c.times[k][0])
