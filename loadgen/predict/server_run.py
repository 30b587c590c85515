"""What a run directory holds of the server's own metrics, for `goodput calibrate` (docs/capacity-predict.md,
Calibrate against vLLM).

`goodput run` scrapes the server's Prometheus /metrics (loadgen.run.scrape): server_prometheus.json holds
what the run did (histogram deltas: count, sum, mean; counter deltas) and vllm:cache_config_info's labels,
server_metrics.jsonl the gauges of every scrape, run.json the wall-clock time of the records' anchor. Read
here: the KV cache's configuration (`block_size`, `num_gpu_blocks`, `enable_prefix_caching`: the scheduler
limits calibrate would otherwise ask for), the means of vllm:request_prefill_time_seconds,
vllm:request_decode_time_seconds (with vllm:generation_tokens_total: per output token, else the mean of
vllm:inter_token_latency_seconds) and vllm:request_queue_time_seconds, and the vllm:num_requests_running /
waiting gauges placed on the records' clock. A run without these files has none of it (None), never 0.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loadgen.predict.step_model import SchedulerLimits
from metrics.results import SERVER_SECTION_FILE, SERVER_SERIES_FILE, run_or_none

# server-model limit name → vllm:cache_config_info label
CACHE_LABELS = {"block_size": "block_size", "num_blocks": "num_gpu_blocks",
                "enable_prefix_caching": "enable_prefix_caching"}


@dataclass(frozen=True, slots=True)
class Gauge:
    t_s: float  # seconds since the records' anchor (the middle of the scrape)
    running: float
    waiting: float | None


@dataclass(frozen=True, slots=True)
class ServerRun:
    cache_config: dict[str, Any] = field(default_factory=dict)  # limit name → value, parsed
    prefill_mean_s: float | None = None
    prefill_count: float = 0.0
    decode_per_token_s: float | None = None
    queue_mean_s: float | None = None
    gauges: list[Gauge] = field(default_factory=list)

    @property
    def has_figures(self) -> bool:
        """Whether the server gave any figure the per-run check reads (a /metrics that is not vLLM's may not)."""
        return bool(self.gauges) or any(v is not None for v in (self.prefill_mean_s, self.decode_per_token_s,
                                                                 self.queue_mean_s))


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def parse_cache_config(labels: dict[str, Any]) -> dict[str, Any]:
    """vllm:cache_config_info's labels (every value a string, "None" when unset) → the limits they give."""
    out: dict[str, Any] = {}
    for name, label in CACHE_LABELS.items():
        value = str(labels.get(label, "")).strip()
        if name == "enable_prefix_caching":
            if value.lower() in ("true", "false"):
                out[name] = value.lower() == "true"
        elif value.isdigit() and int(value) > 0:
            out[name] = int(value)
    return out


def _mean(hist: Any) -> tuple[float | None, float]:
    if not isinstance(hist, dict) or not hist.get("count"):
        return None, 0.0
    return float(hist["sum"]) / float(hist["count"]), float(hist["count"])


def decode_per_token(section: dict[str, Any]) -> float | None:
    """Σ decode time / Σ (output tokens − 1): the decode histogram's sum over the generation tokens less one
    (the first token ends the prefill) per request; else the inter-token latency histogram's mean."""
    decode = section.get("histograms", {}).get("decode_s")
    tokens = section.get("counters", {}).get("generation_tokens", {}).get("delta")
    if isinstance(decode, dict) and decode.get("count") and tokens is not None and tokens > decode["count"]:
        return float(decode["sum"]) / (float(tokens) - float(decode["count"]))
    return _mean(section.get("histograms", {}).get("itl_s"))[0]


def gauges(run_dir: Path, start_unix_s: float) -> list[Gauge]:
    out: list[Gauge] = []
    try:
        lines = (run_dir / SERVER_SERIES_FILE).read_text(encoding="utf-8").splitlines()
    except OSError:
        return out
    for line in lines:
        try:
            p = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(p, dict) or "running" not in p or "unix_s" not in p:
            continue
        mid = (float(p.get("started_unix_s") or p["unix_s"]) + float(p["unix_s"])) / 2
        waiting = p.get("waiting")
        out.append(Gauge(mid - start_unix_s, float(p["running"]), float(waiting) if waiting is not None else None))
    return out


def read_server_run(run_dir: Path) -> ServerRun | None:
    """The server's metrics of one run directory; None when it has no server_prometheus.json with scrapes."""
    section = _read_json(run_dir / SERVER_SECTION_FILE)
    if section is None or not section.get("available"):
        return None
    labels = dict(section.get("cache_config") or {})
    if "block_size" in section and "block_size" not in labels:
        labels["block_size"] = str(section["block_size"])
    hists = section.get("histograms", {})
    prefill, count = _mean(hists.get("prefill_s"))
    run = run_or_none(run_dir) or {}
    start = run.get("start_unix_s")
    return ServerRun(cache_config=parse_cache_config(labels), prefill_mean_s=prefill, prefill_count=count,
                     decode_per_token_s=decode_per_token(section), queue_mean_s=_mean(hists.get("queue_s"))[0],
                     gauges=gauges(run_dir, float(start)) if isinstance(start, (int, float)) else [])


FLAG_OF = {"block_size": "--block-size", "num_blocks": "--num-blocks",
           "enable_prefix_caching": "--prefix-caching or --no-prefix-caching"}


def server_limits(runs: dict[str, ServerRun | None], given: tuple[str, ...] = ()) -> dict[str, Any]:
    """The limits the servers' cache configs give, but those `given` by a flag; ValueError naming the runs
    when they differ in one."""
    found: dict[str, tuple[Any, str]] = {}
    for name, run in runs.items():
        for key, value in (run.cache_config if run is not None else {}).items():
            if key in given:
                continue
            if key in found and found[key][0] != value:
                label = CACHE_LABELS[key]
                raise ValueError(f"the runs' servers differ in {label} ({found[key][0]} in {found[key][1]}, {value} "
                                 f"in {name}): calibrate runs of one server configuration, or give {FLAG_OF[key]}")
            found.setdefault(key, (value, name))
    return {k: v for k, (v, _) in found.items()}


LIMITS = ("max_num_seqs", "max_num_batched_tokens", "block_size", "num_blocks", "enable_prefix_caching")


def resolve_limits(flags: dict[str, Any], server: dict[str, Any]) -> tuple[SchedulerLimits, dict[str, str]]:
    """Each limit from its flag, else from the server's cache config, else SchedulerLimits' default, and
    where each came from ("flag", "server", "default"). ValueError for a limit below 1."""
    defaults = SchedulerLimits()
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for name in LIMITS:
        if flags.get(name) is not None:
            values[name], sources[name] = flags[name], "flag"
        elif name in server:
            values[name], sources[name] = server[name], "server"
        else:
            values[name], sources[name] = getattr(defaults, name), "default"
    return SchedulerLimits(**values), sources
