"""The prefix-cache hit rate a trace should produce (`goodput trace inspect`), predicted from its block ids.

A server with prefix caching (vLLM, SGLang, the reference server) serves a prompt's leading tokens from
cache in whole blocks of its own block size B, as far as the prompt equals one it has seen, never the
prompt's last token. The trace says which prompts share which tokens: a Mooncake request's hash ids name
its consecutive blocks of `block_tokens` tokens, and a block is the same text wherever the same id
follows the same ids (goodput synthesises prompts that way, `loadgen.workload.trace_workload`).

For each request in arrival order, with the requests before it already served:
- M = the longest prefix of its prompt some earlier prompt shares (walked block id by block id; a
  shared last block counts the tokens both prompts hold of it);
- cached = B · ⌊min(M, P − 1) / B⌋ for a prompt of P tokens;
- predicted hit rate = Σ cached / Σ P.

Unbounded: every block seen stays cached. With `cache_blocks` N: an LRU pool of N blocks of B tokens,
filled by each request's prompt and its output (output blocks are never reused by a trace), the deepest
blocks of a request evicted first, as the reference server frees them; evicting whole trace blocks
(`block_tokens` at a time) instead of single server blocks makes this an estimate.

What the prediction leaves out: the chat template's tokens (a few per request, the same on every
request: they shift block boundaries by a few tokens), requests that overlap in time (a prompt still in
prefill is not yet cached), and a server-side eviction policy other than least recently freed.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TypedDict

import numpy as np

from loadgen.workload.traces import Trace


class CachePredictionJSON(TypedDict):
    block_size: int
    cache_blocks: int | None
    prompt_tokens: int
    cached_tokens: int
    hit_rate: float | None


@dataclass(frozen=True, slots=True)
class CachePrediction:
    block_size: int
    cache_blocks: int | None  # None: unbounded
    prompt_tokens: int
    cached_tokens: int

    @property
    def hit_rate(self) -> float | None:
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else None

    def to_json(self) -> CachePredictionJSON:
        return {"block_size": self.block_size, "cache_blocks": self.cache_blocks,
                "prompt_tokens": self.prompt_tokens, "cached_tokens": self.cached_tokens, "hit_rate": self.hit_rate}


def predict_hits(trace: Trace, *, block_size: int, cache_blocks: int | None = None,
                 rows: np.ndarray | None = None) -> CachePrediction:
    """Predicted cached tokens of `rows` (default: the whole trace) replayed in order; see the module doc."""
    if block_size < 1:
        raise ValueError(f"--block-size must be >= 1, got {block_size}")
    if cache_blocks is not None and cache_blocks < 1:
        raise ValueError(f"--cache-blocks must be >= 1, got {cache_blocks}")
    order = np.arange(trace.n) if rows is None else np.asarray(rows)
    inputs = trace.input_tokens[order].tolist()
    total = int(np.sum(trace.input_tokens[order]))
    if trace.hash_ids is None or trace.hash_off is None:
        return CachePrediction(block_size, cache_blocks, total, 0)
    outputs = trace.output_tokens[order].tolist()
    off, ids = trace.hash_off, trace.hash_ids.tolist()
    size = trace.block_tokens
    pool = _Pool(cache_blocks, block_size) if cache_blocks is not None else None
    seen: dict[int, int] = {}  # unbounded: chain key → tokens of that block seen
    cached = 0
    for n, (row, prompt, output) in enumerate(zip(order.tolist(), inputs, outputs, strict=True)):
        chain = 0
        matched = 0
        matching = True
        keys: list[tuple[int, int]] = []  # (chain key, tokens of the block this prompt holds)
        for j in range(int(off[row]), int(off[row + 1])):
            held = min(size, prompt - (j - int(off[row])) * size)
            if held <= 0:
                break
            chain = hash((chain, ids[j]))
            if matching:
                before = pool.held(chain) if pool is not None else seen.get(chain, 0)
                got = min(held, before)
                matched += got
                matching = got == held
            keys.append((chain, held))
        cached += block_size * (min(matched, prompt - 1) // block_size)
        if pool is not None:
            pool.admit(keys, n, prompt, output)
        else:
            for key, held in keys:
                if held > seen.get(key, 0):
                    seen[key] = held
    return CachePrediction(block_size, cache_blocks, total, cached)


class _Pool:
    """An LRU pool of server blocks, held as trace blocks (see the module doc)."""

    def __init__(self, capacity: int, block_size: int) -> None:
        self.capacity = capacity
        self.block_size = block_size
        self.entries: OrderedDict[object, tuple[int, int]] = OrderedDict()  # key → (tokens held, server blocks)
        self.used = 0

    def held(self, key: int) -> int:
        entry = self.entries.get(key)
        return entry[0] if entry is not None else 0

    def admit(self, keys: list[tuple[int, int]], request: int, prompt: int, output: int) -> None:
        # The deepest blocks become least recent, so they are evicted first; the output's blocks below them.
        tail = (prompt % self.block_size) + output
        self._put(("output", request), 0, -(-tail // self.block_size))
        for key, held in reversed(keys):
            old = self.entries.get(key)
            tokens = max(held, old[0]) if old is not None else held
            self._put(key, tokens, -(-tokens // self.block_size))
        while self.used > self.capacity and self.entries:
            _, (_, blocks) = self.entries.popitem(last=False)
            self.used -= blocks

    def _put(self, key: object, tokens: int, blocks: int) -> None:
        old = self.entries.pop(key, None)
        if old is not None:
            self.used -= old[1]
        self.entries[key] = (tokens, blocks)
        self.used += blocks
