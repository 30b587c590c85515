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
A figure of the wrong shape (a histogram without a numeric count and sum, a counter's delta that is no
number, a gauge line whose `running` is not a number, a cache config that is no object) is taken as
absent, and `ServerRun.malformed` names it, for one line on stderr: a hand-edited or truncated file never
stops calibrate.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypedDict

from loadgen.predict.step_model import SchedulerLimits
from metrics.results import (
    SERVER_SECTION_FILE,
    SERVER_SERIES_FILE,
    Json,
    JsonObject,
    finite_or_none,
    json_object,
    run_or_none,
)

CacheLimit = Literal["block_size", "num_blocks", "enable_prefix_caching"]
# server-model limit name → vllm:cache_config_info label
CACHE_LABELS: dict[CacheLimit, str] = {"block_size": "block_size", "num_blocks": "num_gpu_blocks",
                                       "enable_prefix_caching": "enable_prefix_caching"}


class CacheLimits(TypedDict, total=False):
    """The scheduler limits a server's cache config gives (each absent where it gives none)."""
    block_size: int
    num_blocks: int
    enable_prefix_caching: bool


@dataclass(frozen=True, slots=True)
class Gauge:
    t_s: float  # seconds since the records' anchor (the middle of the scrape)
    running: float
    waiting: float | None


@dataclass(frozen=True, slots=True)
class ServerRun:
    cache_config: CacheLimits = field(default_factory=CacheLimits)  # the limits its labels give, parsed
    prefill_mean_s: float | None = None
    prefill_count: float = 0.0
    decode_per_token_s: float | None = None
    queue_mean_s: float | None = None
    gauges: list[Gauge] = field(default_factory=list)
    malformed: tuple[str, ...] = ()  # "FILE: what", each figure of the wrong shape taken as absent

    @property
    def has_figures(self) -> bool:
        """Whether the server gave any figure the per-run check reads (a /metrics that is not vLLM's may not)."""
        return bool(self.gauges) or any(v is not None for v in (self.prefill_mean_s, self.decode_per_token_s,
                                                                 self.queue_mean_s))


def _read_json(path: Path) -> JsonObject | None:
    """The file's JSON object, its values checked once as JSON's; None when unreadable or not an object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return json_object(data) if isinstance(data, dict) else None


def _label(labels: Mapping[str, str], name: CacheLimit) -> str:
    return str(labels.get(CACHE_LABELS[name], "")).strip()


def _count(labels: Mapping[str, str], name: CacheLimit) -> int | None:
    value = _label(labels, name)
    return int(value) if value.isdigit() and int(value) > 0 else None


def parse_cache_config(labels: Mapping[str, str]) -> CacheLimits:
    """vllm:cache_config_info's labels (every value a string, "None" when unset) → the limits they give."""
    out = CacheLimits()
    if (block_size := _count(labels, "block_size")) is not None:
        out["block_size"] = block_size
    if (num_blocks := _count(labels, "num_blocks")) is not None:
        out["num_blocks"] = num_blocks
    if (caching := _label(labels, "enable_prefix_caching").lower()) in ("true", "false"):
        out["enable_prefix_caching"] = caching == "true"
    return out




def _obj(parent: Mapping[str, Json], key: str, where: str, problems: list[str]) -> Mapping[str, Json]:
    """parent[key] when it is an object; {} when absent or null, and noted when it is something else."""
    value = parent.get(key)
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return value
    problems.append(f"{where}{key} is not an object")
    return {}


def _mean(hist: Json, name: str = "", problems: list[str] | None = None) -> tuple[float | None, float]:
    if hist is None:
        return None, 0.0
    if not isinstance(hist, Mapping):
        count, total = None, None
    else:
        count, total = finite_or_none(hist.get("count")), finite_or_none(hist.get("sum"))
    if count is None or total is None or count < 0:
        if problems is not None:
            problems.append(f"histogram {name} has no numeric count and sum")
        return None, 0.0
    return (total / count, count) if count else (None, 0.0)


def decode_per_token(section: Mapping[str, Json], problems: list[str] | None = None) -> float | None:
    """Σ decode time / Σ (output tokens − 1): the decode histogram's sum over the generation tokens less one
    (the first token ends the prefill) per request; else the inter-token latency histogram's mean."""
    notes: list[str] = [] if problems is None else problems
    hists = _obj(section, "histograms", "", notes)
    decode = hists.get("decode_s")
    generation = _obj(_obj(section, "counters", "", notes), "generation_tokens", "counters.", notes)
    tokens = finite_or_none(generation.get("delta"))
    if generation.get("delta") is not None and tokens is None:
        notes.append("counters.generation_tokens.delta is not a number")
    mean, count = _mean(decode, "decode_s", notes)
    if mean is not None and tokens is not None and tokens > count:
        return mean * count / (tokens - count)
    return _mean(hists.get("itl_s"), "itl_s", notes)[0]


def gauges(run_dir: Path, start_unix_s: float, problems: list[str] | None = None) -> list[Gauge]:
    out: list[Gauge] = []
    try:
        lines = (run_dir / SERVER_SERIES_FILE).read_text(encoding="utf-8").splitlines()
    except OSError:
        return out
    bad = 0
    for line in lines:
        try:
            p = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(p, dict) or "running" not in p or "unix_s" not in p:
            continue
        end, running, waiting = finite_or_none(p["unix_s"]), finite_or_none(p["running"]), finite_or_none(p.get("waiting"))
        began = finite_or_none(p.get("started_unix_s")) if p.get("started_unix_s") is not None else end
        if end is None or running is None or began is None or (p.get("waiting") is not None and waiting is None):
            bad += 1
            continue
        out.append(Gauge((began + end) / 2 - start_unix_s, running, waiting))
    if bad and problems is not None:
        problems.append(f"{bad} gauge line(s) with a time, running or waiting that is not a number")
    return out


def read_server_run(run_dir: Path) -> ServerRun | None:
    """The server's metrics of one run directory; None when it has no server_prometheus.json with scrapes."""
    section = _read_json(run_dir / SERVER_SECTION_FILE)
    if section is None or not section.get("available"):
        return None
    problems: list[str] = []
    labels = {str(k): str(v) for k, v in _obj(section, "cache_config", "", problems).items()}
    if "block_size" in section and "block_size" not in labels:
        labels["block_size"] = str(section["block_size"])
    hists = _obj(section, "histograms", "", problems)
    prefill, count = _mean(hists.get("prefill_s"), "prefill_s", problems)
    queue = _mean(hists.get("queue_s"), "queue_s", problems)[0]
    decode = decode_per_token(section, problems)
    run = run_or_none(run_dir) or {}
    start = finite_or_none(run.get("start_unix_s"))
    series: list[str] = []
    points = gauges(run_dir, start, series) if start is not None else []
    malformed = tuple(dict.fromkeys([f"{SERVER_SECTION_FILE}: {p}" for p in problems]
                                    + [f"{SERVER_SERIES_FILE}: {p}" for p in series]))
    return ServerRun(cache_config=parse_cache_config(labels), prefill_mean_s=prefill, prefill_count=count,
                     decode_per_token_s=decode, queue_mean_s=queue, gauges=points, malformed=malformed)


FLAG_OF = {"block_size": "--block-size", "num_blocks": "--num-blocks",
           "enable_prefix_caching": "--prefix-caching or --no-prefix-caching"}


def server_limits(runs: dict[str, ServerRun | None], given: tuple[str, ...] = ()) -> CacheLimits:
    """The limits the servers' cache configs give, but those `given` by a flag; ValueError naming the runs
    when they differ in one."""
    found: dict[CacheLimit, tuple[int | bool, str]] = {}
    for name, run in runs.items():
        config = run.cache_config if run is not None else CacheLimits()
        for key in CACHE_LABELS:
            value = config.get(key)
            if value is None or key in given:
                continue
            if key in found and found[key][0] != value:
                label = CACHE_LABELS[key]
                raise ValueError(f"the runs' servers differ in {label} ({found[key][0]} in {found[key][1]}, {value} "
                                 f"in {name}): calibrate runs of one server configuration, or give {FLAG_OF[key]}")
            found.setdefault(key, (value, name))
    out = CacheLimits()
    if "block_size" in found:
        out["block_size"] = int(found["block_size"][0])
    if "num_blocks" in found:
        out["num_blocks"] = int(found["num_blocks"][0])
    if "enable_prefix_caching" in found:
        out["enable_prefix_caching"] = bool(found["enable_prefix_caching"][0])
    return out


LIMITS = ("max_num_seqs", "max_num_batched_tokens", "block_size", "num_blocks", "enable_prefix_caching")


def resolve_limits(flags: Mapping[str, int | bool | None],
                   server: CacheLimits) -> tuple[SchedulerLimits, dict[str, str]]:
    """Each limit from its flag, else from the server's cache config, else SchedulerLimits' default, and
    where each came from ("flag", "server", "default"). ValueError for a limit below 1."""
    defaults = SchedulerLimits()
    given: dict[str, int | bool] = {k: v for k in CACHE_LABELS if (v := server.get(k)) is not None}
    values: dict[str, int | bool] = {}
    sources: dict[str, str] = {}
    for name in LIMITS:
        flag = flags.get(name)
        if flag is not None:
            values[name], sources[name] = flag, "flag"
        elif name in given:
            values[name], sources[name] = given[name], "server"
        else:
            values[name], sources[name] = getattr(defaults, name), "default"
    return SchedulerLimits(max_num_seqs=int(values["max_num_seqs"]),
                           max_num_batched_tokens=int(values["max_num_batched_tokens"]),
                           block_size=int(values["block_size"]), num_blocks=int(values["num_blocks"]),
                           enable_prefix_caching=bool(values["enable_prefix_caching"])), sources
