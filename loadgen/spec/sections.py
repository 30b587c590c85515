"""The parts of a run spec: one frozen dataclass per concern, each valid by construction.

Every section checks its own values in `__post_init__`, so a spec built from flags, from a config file
or from `run.json` is held to the same rules, and an invalid one cannot exist. Messages name the flag
(`--rate`), which is also the config-file key without its dashes.

Secrets are not part of any section: see `loadgen.secrets`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from loadgen.spec.fail_limit import DEFAULT_MAX_FAILED, parse_fail_limit
from loadgen.workload import Arrival, LengthDist, ThinkTime, check_cancel_spec, parse_models, plain_number
from loadgen.workload.images import ImageSpec
from metrics import SLO
from metrics.gate import Threshold

ENDPOINTS = ("chat", "completions", "responses", "messages")  # the APIs of loadgen.http.api
DATASET_FORMATS = ("auto", "jsonl", "sharegpt")
TRACE_FORMATS = ("auto", "mooncake", "azure", "burstgpt")  # as loadgen.workload.traces reads them
PROMPT_SIZINGS = ("auto", "tokenize", "calibrate", "counter")
DEFAULT_REQUESTS = 100  # when neither --requests nor --duration bounds the run
DEFAULT_RATE = 4.0  # open loop, when --rate is not given
ON_WORKER_FAILURE = ("stop", "continue")
SPREAD = "spread"


class SpecError(ValueError):
    """A run description that cannot be run; the message is one line, fit for the CLI (exit 2)."""


def _require(ok: bool, message: str) -> None:
    if not ok:
        raise SpecError(message)


def _positive_or_none(value: float | None, flag: str) -> None:
    _require(value is None or (math.isfinite(value) and value > 0),
             f"{flag} must be greater than 0, got {plain_number(value or 0.0)}s")


def _non_negative(value: float, flag: str) -> None:
    _require(math.isfinite(value) and value >= 0, f"{flag} must not be negative, got {plain_number(value)}s")


Pairs = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class TargetSpec:
    """Which server, which model, which API. `url` None: the bundled reference server on loopback."""

    url: str | None = None
    model: str | None = None  # None: the first model the server lists
    endpoint: str = "chat"
    server_args: tuple[str, ...] = ()  # extra arguments of the embedded reference server

    def __post_init__(self) -> None:
        _require(self.endpoint in ENDPOINTS, f"--endpoint must be one of {', '.join(ENDPOINTS)}, got {self.endpoint!r}")
        _require(self.url is None or bool(self.url.strip()), "--url must not be empty")
        _require(not self.server_args or self.url is None,
                 "--server-arg applies to the embedded reference server only (no --url)")
        if self.model is not None:
            try:
                parse_models(self.model)
            except ValueError as exc:
                raise SpecError(str(exc)) from None

    @property
    def embedded(self) -> bool:
        return self.url is None


@dataclass(frozen=True, slots=True)
class RequestSpec:
    """What every request carries besides its prompt: sampling options, body extras, headers."""

    ignore_eos: bool | None = None  # None: on for the embedded server, off elsewhere
    min_tokens: int | None = None
    temperature: float | None = None
    usage: bool = True
    continuous_usage: bool = True
    extra_body: str | None = None  # a JSON object, kept as its canonical text (immutable)
    headers: Pairs = ()  # non-secret headers only
    secret_headers: tuple[str, ...] = ()  # names of headers whose values are secrets (never stored)
    max_connections: int = 10_000
    tools: str | None = None  # --tools: the file it was read from
    tool_list: str | None = None  # its checked tool list, as canonical JSON text (what the requests send)
    tool_choice: str | None = None  # auto | required | none | a tool's name

    def __post_init__(self) -> None:
        _require(self.tool_choice is None or self.tool_list is not None, "--tool-choice needs --tools")
        _require(self.min_tokens is None or self.min_tokens >= 0, f"--min-tokens must be >= 0, got {self.min_tokens}")
        _require(self.temperature is None or (math.isfinite(self.temperature) and self.temperature >= 0),
                 f"--temperature must be >= 0, got {self.temperature}")
        _require(self.max_connections >= 1, "--max-connections must be >= 1")

    def resolved_ignore_eos(self, embedded: bool) -> bool:
        return self.ignore_eos if self.ignore_eos is not None else embedded


@dataclass(frozen=True, slots=True)
class WorkloadSpec:
    """What is sent: synthetic prompts of a length distribution, or a dataset."""

    dataset: str | None = None
    dataset_format: str = "auto"
    prompt_tokens: LengthDist = field(default_factory=lambda: LengthDist("fixed", 256.0))
    output_tokens: LengthDist = field(default_factory=lambda: LengthDist("fixed", 128.0))
    prefix_groups: int = 0
    prefix_tokens: int = 0
    prefix_weights: tuple[float, ...] | None = None
    tags: Pairs = ()
    tokenizer: str = "auto"  # words | bytes | path to tokenizer.json | auto (bytes embedded, else words)
    prompt_sizing: str = "auto"  # auto | tokenize | calibrate | counter (loadgen.run.sizing)
    turns: LengthDist | None = None  # conversations: turns per session; None: single requests
    think_time: ThinkTime = field(default_factory=ThinkTime)
    trace: str | None = None  # a trace file replayed at its own timestamps
    trace_format: str = "auto"
    cache_bust: bool = False  # a unique prefix on every request
    images: ImageSpec = field(default_factory=ImageSpec)  # synthetic images on every request (--images)
    # Conversations that call tools: the agent loop (loadgen.workload.agent).
    tool_latency: ThinkTime = field(default_factory=ThinkTime)
    tool_result_tokens: LengthDist = field(default_factory=lambda: LengthDist("fixed", 64.0))
    max_tool_turns: int = 4
    cancel_rate: float = 0.0  # the share of requests the client cancels (loadgen.workload.cancel)
    cancel_after: str | None = None  # when: a duration distribution, or tokens:K

    def __post_init__(self) -> None:
        _require(self.max_tool_turns >= 0, f"--max-tool-turns must be >= 0, got {self.max_tool_turns}")
        _require(self.dataset_format in DATASET_FORMATS,
                 f"unknown --dataset-format {self.dataset_format!r}; choose auto, jsonl or sharegpt")
        _require(self.prefix_groups >= 0 and self.prefix_tokens >= 0,
                 "--prefix-groups and --prefix-tokens must not be negative")
        _require(not self.prefix_groups or self.prefix_tokens > 0, "--prefix-groups needs --prefix-tokens > 0")
        if self.prefix_weights is not None:
            _require(all(math.isfinite(w) and w >= 0 for w in self.prefix_weights) and sum(self.prefix_weights) > 0,
                     "--prefix-weights must be non-negative numbers with a positive sum")
            _require(len(self.prefix_weights) == self.prefix_groups,
                     f"--prefix-weights has {len(self.prefix_weights)} weights for {self.prefix_groups} --prefix-groups")
        _require(bool(self.tokenizer.strip()), "--tokenizer must not be empty")
        _require(self.prompt_sizing in PROMPT_SIZINGS,
                 f"unknown --prompt-sizing {self.prompt_sizing!r}; choose {', '.join(PROMPT_SIZINGS)}")
        _require(self.trace_format in TRACE_FORMATS,
                 f"unknown --trace-format {self.trace_format!r}; choose {', '.join(TRACE_FORMATS)}")
        _require(self.trace is None or bool(self.trace.strip()), "--trace must not be empty")
        _require(self.trace is None or self.dataset is None, "--trace and --dataset are two workloads: give one")
        _require(self.trace is None or self.turns is None,
                 "--turns does not apply to --trace (a trace's requests are replayed as they are)")
        _require(self.trace is None or not self.prefix_groups, "--prefix-groups does not apply to --trace")
        _require(self.turns is not None or self.think_time == ThinkTime(),
                 "--think-time separates the turns of a conversation: it needs --turns")
        _require(self.trace is not None or self.trace_format == "auto", "--trace-format needs --trace FILE")
        _require(self.turns is None or not self.images.enabled,
                 "--images applies to single requests and traces, not to --turns conversations")
        try:
            check_cancel_spec(self.cancel_rate, self.cancel_after)
        except ValueError as exc:
            raise SpecError(str(exc)) from None
        _require(self.tokenizer == "auto" or self.prompt_sizing in ("auto", "counter"),
                 f"--prompt-sizing {self.prompt_sizing} sizes prompts with the server; --tokenizer sizes them locally: "
                 "give one")

    @property
    def conversations(self) -> bool:
        return self.turns is not None

    def token_counter(self, embedded: bool) -> str:
        """The counter prompts are sized with: `auto` resolves by target."""
        if self.tokenizer != "auto":
            return self.tokenizer
        return "bytes" if embedded else "words"


@dataclass(frozen=True, slots=True)
class LoadSpec:
    """When requests leave: the arrival process, how long, how many, what is measured."""

    arrival: Arrival = field(default_factory=lambda: Arrival("poisson", rate=DEFAULT_RATE))
    duration_s: float | None = None
    requests: int | None = DEFAULT_REQUESTS
    warmup_s: float = 0.0
    cooldown_s: float = 0.0
    seed: int = 0
    grace_s: float = 10.0  # after SIGINT/SIGTERM, how long in-flight requests may finish
    time_scale: float = 1.0  # trace replay: 2 replays twice as fast
    trace_start_s: float = 0.0  # trace replay: the window of the trace, in the trace's time
    trace_duration_s: float | None = None
    max_failed: str = DEFAULT_MAX_FAILED  # above it the run exits 1 (loadgen.spec.fail_limit)
    keep_going: bool = False  # send every request even when the first ones all fail alike (loadgen.run.failing)

    def __post_init__(self) -> None:
        _positive_or_none(self.duration_s, "--duration")
        parse_fail_limit(self.max_failed)
        _require(self.requests is None or self.requests >= 1, f"--requests must be >= 1, got {self.requests}")
        _require(self.duration_s is not None or self.requests is not None or self.arrival.kind == "trace",
                 "a run needs --duration and/or --requests")
        _require(math.isfinite(self.time_scale) and self.time_scale > 0,
                 f"--time-scale must be greater than 0, got {plain_number(self.time_scale)}")
        _non_negative(self.trace_start_s, "--trace-start")
        _positive_or_none(self.trace_duration_s, "--trace-duration")
        if self.arrival.kind != "trace":
            _require(self.time_scale == 1.0 and self.trace_start_s == 0.0 and self.trace_duration_s is None,
                     "--time-scale, --trace-start and --trace-duration apply to --trace only")
        _require(self.arrival.kind != "trace" or not self.arrival.rate or self.time_scale == 1.0,
                 "--time-scale and --rate both rescale the trace: give one")
        _require(self.arrival.kind != "ramp" or self.duration_s is not None,
                 "--arrival ramp needs --duration (the ramp's length)")
        _non_negative(self.warmup_s, "--warmup")
        _non_negative(self.cooldown_s, "--cooldown")
        _non_negative(self.grace_s, "--grace")
        _require(self.seed >= 0, f"--seed must be >= 0, got {self.seed}")


@dataclass(frozen=True, slots=True)
class ScaleSpec:
    """Who dispatches the one schedule: this process, worker processes on this host, or Ray actors on a
    cluster's nodes (loadgen.workers). `workers` None is `auto`: on this host its cores − 1 (at least 1),
    on Ray one actor per alive node."""

    workers: int | None = 1
    ray: str | None = None  # None: no Ray; auto (the cluster Ray finds) or the cluster's address
    ray_placement: str = SPREAD  # spread over the nodes, or KEY=VALUE: only on nodes with that label
    on_worker_failure: str = "stop"  # stop the run (exit 1) or continue without the lost worker

    def __post_init__(self) -> None:
        _require(self.workers is None or self.workers >= 1, f"--workers must be >= 1 or auto, got {self.workers}")
        _require(self.on_worker_failure in ON_WORKER_FAILURE,
                 f"--on-worker-failure must be stop or continue, got {self.on_worker_failure!r}")
        _require(self.ray is None or bool(self.ray.strip()), "--ray must be auto or a Ray cluster address")
        _require(self.ray is not None or self.ray_placement == SPREAD, "--ray-placement needs --ray")
        if self.ray_placement != SPREAD:
            key, eq, value = self.ray_placement.partition("=")
            _require(bool(eq and key.strip() and value.strip()),
                     f"--ray-placement must be spread or KEY=VALUE (a node label), got {self.ray_placement!r}")

    @property
    def distributed(self) -> bool:
        """Whether the run is dispatched by workers (processes or actors) rather than in this process."""
        return self.ray is not None or self.workers != 1

    def node_label(self) -> dict[str, str] | None:
        """The node label actors are pinned to (`--ray-placement KEY=VALUE`), or None to spread them."""
        if self.ray_placement == SPREAD:
            return None
        key, _, value = self.ray_placement.partition("=")
        return {key.strip(): value.strip()}


@dataclass(frozen=True, slots=True)
class RooflineSpec:
    """The deployment under test, for roofline floors beside the measured TTFT and TPOT."""

    model_config: str
    gpu: str
    tp: int = 1
    weight_dtype: str = "bf16"

    def __post_init__(self) -> None:
        from metrics.model import dtype_bytes, resolve_gpu, resolve_model

        _require(self.tp >= 1, f"--tp must be >= 1, got {self.tp}")
        try:
            resolve_model(self.model_config)
            resolve_gpu(self.gpu)
            dtype_bytes(self.weight_dtype)
        except ValueError as exc:
            raise SpecError(str(exc)) from None


@dataclass(frozen=True, slots=True)
class MetricsSpec:
    """How records become figures: the SLO, buckets, thresholds of stalls and client saturation."""

    slo: SLO = field(default_factory=SLO)
    stall_threshold_s: float = 1.0
    lag_threshold_s: float = 0.010
    prompt_bucket_edges: tuple[int, ...] | None = None  # None: the defaults of metrics.summary.buckets
    output_bucket_edges: tuple[int, ...] | None = None
    cache_full_ratio: float = 0.9
    absent_cache_is_zero: bool = False
    roofline: RooflineSpec | None = None

    def __post_init__(self) -> None:
        _require(math.isfinite(self.stall_threshold_s) and self.stall_threshold_s > 0,
                 f"--stall-threshold must be greater than 0, got {plain_number(self.stall_threshold_s)}s")
        _non_negative(self.lag_threshold_s, "--lag-threshold")
        _require(0 < self.cache_full_ratio <= 1, "--cache-full-ratio must be in (0, 1]")
        for edges, flag in ((self.prompt_bucket_edges, "--prompt-buckets"), (self.output_bucket_edges, "--output-buckets")):
            _require(edges is None or (bool(edges) and list(edges) == sorted(set(edges)) and edges[0] >= 0),
                     f"{flag} must be increasing non-negative integers, got {edges}")


@dataclass(frozen=True, slots=True)
class OutputSpec:
    """Where results go and how the run talks to its user."""

    output: str | None = None  # None: runs/<timestamp>
    overwrite: bool = False  # replace the run already in --output
    quiet: bool = False
    html: bool = True  # write report.html at the end


@dataclass(frozen=True, slots=True)
class PrometheusSpec:
    """Live /metrics, Pushgateway and scraping the server's own metrics."""

    metrics_port: int | None = None
    metrics_host: str = "127.0.0.1"
    metrics_linger_s: float = 0.0
    pushgateway: str | None = None  # without credentials (they are secrets)
    pushgateway_job: str = "goodput"
    pushgateway_user: str | None = None
    pushgateway_interval_s: float = 0.0
    pushgateway_delete: bool = False
    server_metrics: str = "auto"  # auto | none | URL
    server_metrics_interval_s: float = 5.0
    scrape: tuple[str, ...] = ()  # NAME=URL: GPU telemetry endpoints (loadgen.run.gpu_scrape)

    def __post_init__(self) -> None:
        _require(self.metrics_port is None or 0 <= self.metrics_port <= 65535,
                 f"--metrics-port must be in 0..65535, got {self.metrics_port}")
        _non_negative(self.metrics_linger_s, "--metrics-linger")
        _non_negative(self.pushgateway_interval_s, "--pushgateway-interval")
        _require(self.pushgateway is not None or not (self.pushgateway_delete or self.pushgateway_interval_s),
                 "--pushgateway-delete and --pushgateway-interval need --pushgateway URL")
        _require(self.server_metrics in ("auto", "none") or self.server_metrics.startswith(("http://", "https://")),
                 f"--server-metrics must be auto, none or an http(s) URL, got {self.server_metrics!r}")
        _require(math.isfinite(self.server_metrics_interval_s) and self.server_metrics_interval_s > 0,
                 "--server-metrics-interval must be > 0")
        if self.scrape:
            from loadgen.spec.scrape_targets import parse_scrape_targets

            try:
                parse_scrape_targets(self.scrape)
            except ValueError as exc:
                _require(False, str(exc))


@dataclass(frozen=True, slots=True)
class GateSpec:
    """Pass conditions judged at the end (exit 99 on failure), some of which may stop the run early."""

    thresholds: tuple[Threshold, ...] = ()
    abort_thresholds: tuple[Threshold, ...] = ()  # the subset that may abort a running test
    abort_delay_s: float | None = None  # None: the default delay
    abort_interval_s: float | None = None
    baseline: str | None = None
    junit: str | None = None
    markdown: str | None = None

    def __post_init__(self) -> None:
        _require(set(self.abort_thresholds) <= set(self.thresholds), "abort thresholds must be among the thresholds")
        if not self.thresholds:
            _require(not (self.baseline or self.junit or self.markdown),
                     "--abort-on-fail, --baseline, --junit and --markdown need thresholds (--threshold or --config)")
        if self.abort_delay_s is not None:
            _non_negative(self.abort_delay_s, "--abort-delay")
        _positive_or_none(self.abort_interval_s, "abort_interval")
        relative = [t.text for t in self.thresholds if t.needs_baseline]
        _require(not relative or self.baseline is not None,
                 f"threshold {relative[0]!r} is relative to a baseline: pass --baseline DIR" if relative else "")

    @property
    def enabled(self) -> bool:
        return bool(self.thresholds)
