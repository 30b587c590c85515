"""The prefix-cache hit rate a trace replay should produce, predicted with the server's own block size.

A prefix cache serves whole blocks, so the prediction (loadgen.workload.prefix_cache) depends on the
server's block size: vLLM's GPU build uses 16 tokens, its CPU build 128. vLLM says which in its
`/metrics` (`vllm:cache_config_info{block_size="..."}`, loadgen.run.scrape); the prediction uses that
when the server gives it, else `--block-size` or the default of 16, and always says which it used.

- `goodput trace inspect FILE --url URL` reads the server's block size before predicting;
- `goodput run --trace` (a Mooncake trace with block ids) predicts the replay before the first request,
  prints it, keeps it in run.json (`resolved.prefix_cache_prediction`), and the console sets the
  measured ratio beside it at the end (exporters.workload_notes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

import httpx

from loadgen.http import needs_tls, public_url
from loadgen.run.scrape import parse_exposition

DEFAULT_BLOCK_SIZE = 16  # vLLM's GPU build and the reference server
METRICS_TIMEOUT_S = 5.0


class BlockSizeJSON(TypedDict):
    block_size: int
    block_size_source: str
    block_size_from: NotRequired[str]  # the /metrics that said so (source "server")


@dataclass(frozen=True, slots=True)
class BlockSize:
    tokens: int
    source: str  # server | option | default
    url: str | None = None  # the /metrics that said so (source "server")

    def describe(self) -> str:
        """How the prediction's block size was chosen, for the console."""
        if self.source == "server":
            return f"server blocks of {self.tokens} tokens, from its vllm:cache_config_info"
        if self.source == "option":
            return f"blocks of {self.tokens} tokens, from --block-size"
        return (f"blocks of {self.tokens} tokens, the default: the server's own is unknown (vLLM's GPU build"
                " uses 16, its CPU build 128)")

    def to_json(self) -> BlockSizeJSON:
        out: BlockSizeJSON = {"block_size": self.tokens, "block_size_source": self.source}
        if self.url:
            out["block_size_from"] = self.url
        return out


def server_block_size(metrics_url: str, *, headers: dict[str, str] | None = None) -> int | None:
    """The block size the server's /metrics announces; None when it cannot be read or does not say."""
    try:
        resp = httpx.get(metrics_url, headers=headers or {}, timeout=METRICS_TIMEOUT_S, trust_env=False,
                         verify=needs_tls(metrics_url))
        resp.raise_for_status()
        return parse_exposition(resp.text).block_size
    except (httpx.HTTPError, ValueError):
        return None


def resolve_block_size(option: int | None, metrics_url: str | None) -> BlockSize:
    """`--block-size` when given; else the server's own (`metrics_url`); else the default."""
    if option is not None:
        return BlockSize(option, "option")
    if metrics_url is not None:
        tokens = server_block_size(metrics_url)
        if tokens is not None:
            return BlockSize(tokens, "server", public_url(metrics_url))
    return BlockSize(DEFAULT_BLOCK_SIZE, "default")


class RunPredictionJSON(TypedDict):
    """run.json's `resolved.prefix_cache_prediction`: the prediction (loadgen.workload.prefix_cache's
    CachePredictionJSON), its block size and where it came from."""

    block_size: int
    cache_blocks: int | None
    prompt_tokens: int
    cached_tokens: int
    hit_rate: float | None
    block_size_source: str
    block_size_from: NotRequired[str]
    blocks: str  # how the block size was chosen, for the console


def run_prediction(workload: Any, metrics_url: str | None) -> RunPredictionJSON | None:
    """The predicted hit rate of a run's trace replay (None for any other workload, a trace without block
    ids, or a `--cache-bust` run, where nothing can hit)."""
    from loadgen.workload import TraceWorkload, predict_hits

    workload = getattr(workload, "uncancelled", workload)  # a cancellation plan changes no prompt
    if not isinstance(workload, TraceWorkload) or workload.trace.hash_ids is None:
        return None
    size = resolve_block_size(None, metrics_url)
    prediction = predict_hits(workload.trace, block_size=size.tokens, rows=workload.rows)
    return {**prediction.to_json(), **size.to_json(), "blocks": size.describe()}


def prediction_line(prediction: RunPredictionJSON) -> str:
    rate = prediction.get("hit_rate")
    shown = f"{rate:.1%}" if isinstance(rate, float) else "n/a"
    return f"goodput: predicted prefix-cache hit rate of this replay: {shown} ({prediction.get('blocks')})"
