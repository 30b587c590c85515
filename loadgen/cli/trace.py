"""`goodput trace inspect FILE`: a trace's shape and the prefix-cache hit rate its replay should produce."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from loadgen.cli.trace_json import LruPart, PrefixCachePrediction, TraceInspection
from loadgen.workload import Lengths

TRACE_HELP = "Production traces: what a trace holds before `goodput run --trace` replays it."
INSPECT_HELP = """Print a trace's shape and its predicted prefix-cache hit rate.

Shape: requests, duration, rate per minute (the mean over the whole span; the peak over the busiest
window of at most 60 s, the whole span for a shorter trace), prompt (ISL) and output (OSL) length
percentiles. Prediction (Mooncake traces, whose hash ids record prompt reuse): the share of prompt tokens
a prefix-caching server serves from cache when the trace is replayed in order, with an unbounded cache
and, with --cache-blocks N, an LRU cache of N blocks. The server's block size matters: --url reads it
from the server's /metrics (vLLM's vllm:cache_config_info; its CPU build uses 128), --block-size sets
it, else 16; the output says which. A replay on the reference server measures the same ratio
(summary.json tokens.prefix_cache.cached_ratio).

\b
Examples:
  goodput trace inspect mooncake_trace.jsonl
  goodput trace inspect mooncake_trace.jsonl --block-size 16 \\
      --cache-blocks 200000 --json
  goodput trace inspect mooncake_trace.jsonl --url http://127.0.0.1:8000
  goodput trace inspect AzureLLMInferenceTrace_conv.csv
"""

trace_app = typer.Typer(help=TRACE_HELP, no_args_is_help=True)


@trace_app.command("inspect", help=INSPECT_HELP)
def inspect(
    file: Annotated[Path, typer.Argument(help="Mooncake JSONL, Azure or BurstGPT CSV.")],
    trace_format: Annotated[str, typer.Option(help="auto | mooncake | azure | burstgpt.")] = "auto",
    block_size: Annotated[int | None, typer.Option(help="The server's tokens per KV block (default: the server's own with --url, else 16; vLLM's CPU build uses 128).", min=1)] = None,
    url: Annotated[str | None, typer.Option(help="The server the trace is for: its /metrics gives the block size (vllm:cache_config_info).")] = None,
    cache_blocks: Annotated[int | None, typer.Option(help="Also predict with an LRU cache of this many blocks (the server's KV pool).", min=1)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout, for scripts.")] = False,
) -> None:
    from loadgen.run import metrics_url_for, resolve_block_size
    from loadgen.workload import describe_trace, load_trace, predict_hits

    if url is not None and not url.startswith(("http://", "https://")):
        raise typer.BadParameter(f"--url must be an http(s) URL, got {url!r}")
    try:
        trace = load_trace(str(file), trace_format)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    size = resolve_block_size(block_size, metrics_url_for(url) if url is not None else None)
    unbounded = predict_hits(trace, block_size=size.tokens).to_json()
    lru: LruPart = {} if cache_blocks is None else {
        "lru": predict_hits(trace, block_size=size.tokens, cache_blocks=cache_blocks).to_json()}
    prediction: PrefixCachePrediction = {"unbounded": unbounded, **size.to_json(), "blocks": size.describe(), **lru}
    out: TraceInspection = {**describe_trace(trace), "prefix_cache": prediction}
    typer.echo(json.dumps(out, indent=2) if as_json else render(out))


def _lengths(block: Lengths) -> str:
    figures = (("mean", block["mean"]), ("p50", block["p50"]), ("p90", block["p90"]), ("p99", block["p99"]),
               ("max", block["max"]))
    return "  ".join(f"{k} {v:.0f}" for k, v in figures)


def _pct(value: float | None) -> str:
    return f"{value:.1%}" if isinstance(value, float) else "n/a"


def render(out: TraceInspection) -> str:
    mean = out["mean_rate_per_min"]
    lines = [
        f"trace: {out['path']} ({out['format']})",
        f"requests: {out['requests']} over {out['duration_s']:.1f} s; rate per minute: mean {mean:.1f} over the "
        f"span, peak {out['peak_rate_per_min']:.1f} in the busiest {out['peak_window_s']:.3g} s"
        if mean is not None else
        f"requests: {out['requests']} over {out['duration_s']:.1f} s",
        f"input tokens (ISL):  {_lengths(out['input_tokens'])}",
        f"output tokens (OSL): {_lengths(out['output_tokens'])}",
    ]
    blocks = out.get("blocks")
    pred = out["prefix_cache"]
    unbounded = pred["unbounded"]
    if blocks is None:
        lines.append("predicted prefix-cache hit rate: 0% (this format records no prompt reuse: every prompt is unique)")
        return "\n".join(lines)
    lines.append(f"blocks: {blocks['block_tokens']} tokens each; {blocks['total']} in prompts, {blocks['unique']} distinct")
    blocks_text = pred.get("blocks", f"server blocks of {unbounded['block_size']} tokens")
    text = (f"predicted prefix-cache hit rate ({blocks_text}): "
            f"{_pct(unbounded['hit_rate'])} with an unbounded cache")
    lru = pred.get("lru")
    if lru is not None:
        text += f", {_pct(lru['hit_rate'])} with an LRU cache of {lru['cache_blocks']} blocks"
    lines.append(text + f" ({unbounded['cached_tokens']} of {unbounded['prompt_tokens']} prompt tokens)")
    return "\n".join(lines)
