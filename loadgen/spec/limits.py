"""A run spec held to the documented maxima (loadgen.workload.bounds): one line naming the option.

Checked by `RunSpec` itself, on the sections it reads (so this module stays below run_spec.py), so a spec
built from flags, a config file or a `run.json` cannot ask for a prompt, a schedule or a conversation
larger than any server takes or this client can build.
"""

from __future__ import annotations

from loadgen.spec.sections import LoadSpec, MetricsSpec, RequestSpec, ScaleSpec, WorkloadSpec
from loadgen.workload import (
    MAX_CONCURRENCY,
    MAX_CONNECTIONS,
    MAX_HORIZON_S,
    MAX_PREFIX_GROUPS,
    MAX_PREFIX_TOTAL_TOKENS,
    MAX_REQUESTS,
    MAX_TOKENS,
    MAX_TURNS,
    MAX_WORKERS,
    check_count,
    check_length,
    highest_length,
    shown_length,
)

MAX_SEED = 2**63 - 1  # run.json and records are JSON with 64-bit integers
MAX_TP = 1024


def check_limits(w: WorkloadSpec, request: RequestSpec, load: LoadSpec, scale: ScaleSpec,
                 metrics: MetricsSpec) -> None:
    """ValueError (one line, naming the option) for the first value past its maximum."""
    arrival = load.arrival
    check_length(w.prompt_tokens, "--prompt-tokens")
    check_length(w.output_tokens, "--output-tokens")
    check_count(w.prefix_tokens, "--prefix-tokens", MAX_TOKENS)
    check_count(w.prefix_groups, "--prefix-groups", MAX_PREFIX_GROUPS)
    if w.prefix_groups * w.prefix_tokens > MAX_PREFIX_TOTAL_TOKENS:
        raise ValueError(f"--prefix-groups {w.prefix_groups} × --prefix-tokens {w.prefix_tokens}: the shared "
                         f"prefixes may hold at most {MAX_PREFIX_TOTAL_TOKENS:,} tokens in all")
    request_tokens = w.prefix_tokens + highest_length(w.prompt_tokens) + highest_length(w.output_tokens)
    if request_tokens > MAX_TOKENS:
        raise ValueError(f"--prefix-tokens {w.prefix_tokens} + --prompt-tokens {shown_length(w.prompt_tokens)} + "
                         f"--output-tokens {shown_length(w.output_tokens)}: at most {MAX_TOKENS:,} tokens per request")
    if w.turns is not None:  # a long conversation's history is bounded by the body limit, turn by turn
        check_length(w.turns, "--turns", limit=MAX_TURNS)
    check_count(request.min_tokens, "--min-tokens", MAX_TOKENS)
    check_count(request.max_connections, "--max-connections", MAX_CONNECTIONS)
    check_count(arrival.concurrency, "--concurrency", MAX_CONCURRENCY)
    check_count(load.requests, "--requests", MAX_REQUESTS)
    check_count(load.seed, "--seed", MAX_SEED)
    check_count(scale.workers, "--workers", MAX_WORKERS)
    if metrics.roofline is not None:
        check_count(metrics.roofline.tp, "--tp", MAX_TP)
    for edges, flag in ((metrics.prompt_bucket_edges, "--prompt-buckets"),
                        (metrics.output_bucket_edges, "--output-buckets")):
        if edges:
            check_count(edges[-1], flag, MAX_TOKENS)
    _check_planned(load)
    for rate, flag in ((arrival.rate, "--rate"), (arrival.rate_end, "--rate-end")):
        if 0 < rate < 1 / MAX_HORIZON_S:
            raise ValueError(f"{flag} {rate:g}: at least one request per {MAX_HORIZON_S / 86_400:.0f} days")


def _check_planned(load: LoadSpec) -> None:
    """An open loop bounded by its duration only plans rate × duration requests, drawn up front."""
    arrival = load.arrival
    if load.requests is not None or load.duration_s is None or arrival.kind in ("concurrency", "trace"):
        return
    rate = (arrival.rate + arrival.rate_end) / 2 if arrival.kind == "ramp" else arrival.rate
    planned = rate * load.duration_s
    if planned > MAX_REQUESTS:
        raise ValueError(f"--rate {arrival.rate:g} over --duration {load.duration_s:g}s plans {planned:.3g} "
                         f"requests; a run sends at most {MAX_REQUESTS:,} (lower them, or cap with --requests)")
