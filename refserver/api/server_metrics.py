"""The reference server's `/metrics`: vLLM's metric names, types, labels and bucket boundaries.

So the dashboards and alert rules written for vLLM work unchanged. Names and buckets as vLLM's
`vllm/v1/metrics/loggers.py` defines them; the label is `model_name` (plus `finished_reason` on
`vllm:request_success_total`). Request histograms and token counters are fed by the HTTP layer as
events arrive; gauges and the engine's cumulative counters (prefix cache, preemptions) are read from
`engine.stats()` at scrape time by a custom collector. One fresh `CollectorRegistry` per app.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from refserver.engine import EngineStats

TTFT_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
                20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)  # fmt: skip
ITL_BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
               40.0, 80.0)  # fmt: skip
REQUEST_LATENCY_BUCKETS = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
                           120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)  # fmt: skip
FINISHED_REASONS = ("stop", "length", "abort", "error")


def build_1_2_5_buckets(max_value: int) -> list[int]:
    """1, 2, 5, 10, 20, 50, ... up to `max_value` (vLLM's token-count buckets, sized by the context)."""
    buckets: list[int] = []
    scale = 1
    while True:
        for mantissa in (1, 2, 5):
            if mantissa * scale > max_value:
                return buckets
            buckets.append(mantissa * scale)
        scale *= 10


class EngineStatsCollector(Collector):
    """Gauges and cumulative engine counters, read from one `stats()` snapshot per scrape."""

    def __init__(self, stats: Callable[[], EngineStats], model_name: str) -> None:
        self._stats = stats
        self._labels = [model_name]

    def collect(self) -> Iterator[Metric]:
        snapshot = self._stats()
        label = ["model_name"]
        gauges = (
            ("vllm:num_requests_running", "Number of requests in model execution batches.", snapshot.num_running),
            ("vllm:num_requests_waiting", "Number of requests waiting to be processed.", snapshot.num_waiting),
            ("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", snapshot.kv_usage),
        )
        for name, doc, value in gauges:
            gauge = GaugeMetricFamily(name, doc, labels=label)
            gauge.add_metric(self._labels, float(value))
            yield gauge
        counters = (
            ("vllm:prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens.",
             snapshot.prefix_queries_tokens),
            ("vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.",
             snapshot.prefix_hit_tokens),
            ("vllm:num_preemptions", "Cumulative number of preemption from the engine.", snapshot.num_preemptions),
        )  # fmt: skip
        for name, doc, total in counters:
            counter = CounterMetricFamily(name, doc, labels=label)
            counter.add_metric(self._labels, float(total))
            yield counter
        if snapshot.block_size is not None:  # as vLLM: the KV cache's configuration in an info gauge's labels
            names = ["block_size", "num_gpu_blocks", "enable_prefix_caching"]
            info = GaugeMetricFamily("vllm:cache_config_info", "Information of the LLMEngine CacheConfig",
                                     labels=names)
            info.add_metric([str(snapshot.block_size), str(snapshot.num_total_blocks),
                             str(bool(snapshot.prefix_caching))], 1.0)
            yield info


_HISTOGRAMS: dict[str, tuple[str, str, tuple[float, ...] | None]] = {
    # attribute: (name, help, buckets); None = token-count buckets sized by the context length
    "ttft": ("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", TTFT_BUCKETS),
    "itl": ("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", ITL_BUCKETS),
    "tpot": (
        "vllm:time_per_output_token_seconds",
        "Histogram of time per output token in seconds (older name of the inter-token latency).",
        ITL_BUCKETS,
    ),
    "e2e": ("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.",
            REQUEST_LATENCY_BUCKETS),
    "queue": ("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.",
              REQUEST_LATENCY_BUCKETS),
    "prefill": ("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.",
                REQUEST_LATENCY_BUCKETS),
    "decode": ("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.",
               REQUEST_LATENCY_BUCKETS),
    "inference": ("vllm:request_inference_time_seconds",
                  "Histogram of time spent in RUNNING phase for request.", REQUEST_LATENCY_BUCKETS),
    "prompt_len": ("vllm:request_prompt_tokens", "Number of prefill tokens processed.", None),
    "output_len": ("vllm:request_generation_tokens", "Number of generation tokens processed.", None),
}


class ServerMetrics:
    """The instruments the HTTP layer feeds as a request progresses; `exposition()` renders them all."""

    def __init__(self, *, model_name: str, max_model_len: int, stats: Callable[[], EngineStats]) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.registry.register(EngineStatsCollector(stats, model_name))
        token_buckets = tuple(float(b) for b in build_1_2_5_buckets(max_model_len))
        self._hists: dict[str, Histogram] = {}
        for attr, (name, doc, buckets) in _HISTOGRAMS.items():
            family = Histogram(name, doc, ["model_name"], buckets=buckets or token_buckets, registry=self.registry)
            self._hists[attr] = family.labels(model_name)
        self._prompt_tokens = Counter(
            "vllm:prompt_tokens", "Number of prefill tokens processed.", ["model_name"], registry=self.registry
        ).labels(model_name)
        self._generation_tokens = Counter(
            "vllm:generation_tokens", "Number of generation tokens processed.", ["model_name"],
            registry=self.registry,
        ).labels(model_name)  # fmt: skip
        success = Counter(
            "vllm:request_success", "Count of successfully processed requests.",
            ["model_name", "finished_reason"], registry=self.registry,
        )  # fmt: skip
        # Every reason exists from the start, so a rate() over it has a zero to start from.
        self._success = {reason: success.labels(model_name, reason) for reason in FINISHED_REASONS}

    def observe_first_token(self, *, ttft_s: float, prompt_tokens: int) -> None:
        self._hists["ttft"].observe(ttft_s)
        self._prompt_tokens.inc(prompt_tokens)

    def observe_tokens(self, *, count: int, gap_s: float | None) -> None:
        """One engine event's tokens; `gap_s` since the request's previous token (None for the first)."""
        self._generation_tokens.inc(count)
        if gap_s is not None:
            self._hists["itl"].observe(gap_s)
            self._hists["tpot"].observe(gap_s)

    def observe_finished(
        self,
        *,
        reason: str,
        e2e_s: float,
        queue_s: float | None,
        prefill_s: float | None,
        decode_s: float | None,
        prompt_tokens: int,
        output_tokens: int,
    ) -> None:
        self._success[reason if reason in self._success else "error"].inc()
        self._hists["e2e"].observe(e2e_s)
        self._hists["prompt_len"].observe(prompt_tokens)
        self._hists["output_len"].observe(output_tokens)
        # Phases a request never reached (aborted while waiting) are not observed as zero.
        for attr, value in (("queue", queue_s), ("prefill", prefill_s), ("decode", decode_s)):
            if value is not None:
                self._hists[attr].observe(value)
        if prefill_s is not None:
            self._hists["inference"].observe(prefill_s + (decode_s or 0.0))

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
