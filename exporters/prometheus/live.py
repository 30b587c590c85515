"""The load generator's own Prometheus metrics for one run, live on `/metrics` and at the end as files.

Every run gets a fresh `CollectorRegistry` (never the global one). Records reach `RunMetrics.observe`
as requests finish (a runner hook: an append under a lock); they are folded into the instruments in
batches when Prometheus scrapes, when the textfile is written or when the run pushes, with the same
vectorised formulas as summary.json (metrics.latency.derive, metrics.slo), so a histogram and the summary
describe the same samples: status "ok" requests inside the measurement window.

Families (base units; `_total` counters; labels bounded: prompt bucket, cache-hit class, the
`scenario` and `tenant` tags, the model, status, error kind and whether sent — never ids or prompts):

    goodput_{ttft,ttft_from_schedule,itl,itl_per_token,tpot,e2e,dispatch_lag}_seconds   histograms
    goodput_requests_total{status,error_kind,sent,scenario,tenant,model}   every finished request (one each)
    goodput_evaluated_requests_total / goodput_good_requests_total   measured / good (SLO attainment = ratio)
    goodput_{prompt,cached_prompt,output}_tokens_total               ok measured requests
    goodput_requests_dispatched_total, goodput_in_flight_requests, goodput_offered_rate_requests_per_second
    goodput_slo_threshold_seconds{slo}, goodput_run_info{run_id,model,load}
    reasoning and tool calls (TTFO, ...): exporters.prometheus.answer_instruments, when a request has them

The request counters add up like summary.json's `requests`: `sent="true"` / `"false"` splits
goodput_requests_total into requests whose bytes were written and requests that failed or were
cancelled before that (summary `sent` / `never_sent`); its sum is summary `records`; and
dispatched = finished (goodput_requests_total) + in flight.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from exporters.prometheus.answer_instruments import AnswerInstruments
from exporters.prometheus.histogram_buckets import lag_buckets, latency_buckets
from exporters.prometheus.instruments import BatchCounter, BatchHistogram, LabelValues
from metrics import SLO, good_requests
from metrics.latency import Samples, answer, derive, fluidity_index
from metrics.records import OK, RequestFrame, RequestRecord, frame_from_records
from metrics.summary import (
    CACHE_CLASSES,
    DEFAULT_PROMPT_EDGES,
    cache_classes,
    excluded_from_goodput,
    measurement_window,
    range_codes,
    range_labels,
)

TAG_LABELS: tuple[str, ...] = ("scenario", "tenant")
# `model`: the model each request named, on every run (empty when a record names none), so a family's label
# names never depend on how many models ran; dashboards that sum over the other labels read the same.
BUCKET_LABELS: tuple[str, ...] = ("prompt_bucket", "cache", *TAG_LABELS, "model")
STATUS_LABELS: tuple[str, ...] = ("status", "error_kind", "sent", *TAG_LABELS, "model")
STATUSES: tuple[str, ...] = ("ok", "error", "cancelled")
HISTOGRAMS: tuple[tuple[str, str], ...] = (
    ("ttft", "Time to first content chunk, from the actual send."),
    ("ttft_from_schedule", "Time to first content chunk, from the intended send time."),
    ("itl", "Inter-chunk latency, one sample per gap between content chunks."),
    ("itl_per_token", "Inter-token latency: each gap split evenly over the tokens of its chunk."),
    ("tpot", "Time per output token of a request, (last - first chunk) / (N - 1), N >= 2."),
    ("e2e", "End-to-end latency to the last content chunk, from the actual send."),
    ("dispatch_lag", "Actual minus intended send time."),
)


class LiveState(Protocol):
    """What the exporter reads from the runner at scrape time (loadgen.dispatch.runner.RunState satisfies it).

    `sent` is the runner's count of requests it started (dispatched), whether or not they were then
    written to the wire; it is exposed as goodput_requests_dispatched_total."""

    sent: int
    in_flight: int


@dataclass(frozen=True, slots=True)
class LiveConfig:
    run_id: str
    slo: SLO = field(default_factory=SLO)
    prompt_bucket_edges: Sequence[int] = DEFAULT_PROMPT_EDGES
    cache_full_ratio: float = 0.9
    absent_cache_is_zero: bool = False
    warmup_s: float = 0.0
    cooldown_s: float = 0.0
    schedule_end_s: float | None = None  # cool-down only applies live when the schedule's end is known
    lag_threshold_s: float | None = None
    offered_rps: float | None = None
    model: str = ""
    load: str = ""

    def slo_thresholds(self) -> dict[str, float]:
        named = {"ttft": self.slo.ttft_s, "tpot": self.slo.tpot_s, "e2e": self.slo.e2e_s,
                 "itl_max": self.slo.itl_max_s, "ttfo": self.slo.ttfo_s}
        return {k: v for k, v in named.items() if v is not None}


class RunMetrics(Collector):
    """The instruments of one run; register-free use: `RunMetrics(config).registry`."""

    def __init__(self, config: LiveConfig, *, state: LiveState | None = None) -> None:
        self.config = config
        self.state = state
        # Two locks: the runner's hook only ever waits for the short list swap, never for a fold.
        self._pending_lock = threading.Lock()
        self._lock = threading.Lock()  # the instruments: folding and rendering
        self._pending: list[RequestRecord] = []
        slo = config.slo
        lat = latency_buckets([slo.ttft_s, slo.tpot_s, slo.e2e_s, slo.itl_max_s, *(slo.fluidity_deadlines() or ()),
                               slo.ttfo_s])
        self.histograms = {
            name: BatchHistogram(f"goodput_{name}_seconds", doc, BUCKET_LABELS,
                                 lag_buckets([config.lag_threshold_s]) if name == "dispatch_lag" else lat)
            for name, doc in HISTOGRAMS
        }
        self.requests = BatchCounter("goodput_requests", "Finished requests by status and error kind; sent=false: "
                                     "failed or cancelled before the request was written.", STATUS_LABELS)
        self.evaluated = BatchCounter("goodput_evaluated_requests",
                                      "Requests in the measurement window, whatever their outcome.", BUCKET_LABELS)
        self.good = BatchCounter("goodput_good_requests",
                                 "Measured requests that succeeded and met every SLO.", BUCKET_LABELS)
        self.tokens = {
            kind: BatchCounter(f"goodput_{kind}_tokens", f"{doc} of successful measured requests.", BUCKET_LABELS)
            for kind, doc in (("prompt", "Prompt tokens"), ("cached_prompt", "Prompt tokens served from the "
                              "prefix cache (server-reported)"), ("output", "Output tokens"))
        }
        self.answers = AnswerInstruments(lat, BUCKET_LABELS, shown=slo.ttfo_s is not None)
        self._prompt_labels = range_labels(tuple(config.prompt_bucket_edges))
        self.registry = CollectorRegistry()
        self.registry.register(self)

    def observe(self, record: RequestRecord) -> None:
        """Runner hook: queue a finished request (cheap; folded in at the next scrape)."""
        with self._pending_lock:
            self._pending.append(record)

    def flush(self) -> None:
        """Fold every queued record into the instruments."""
        with self._pending_lock:
            pending, self._pending = self._pending, []
        if pending:
            frame = frame_from_records(pending)
            with self._lock:
                self._fold(frame)

    def fold(self, frame: RequestFrame, gap_samples: tuple[Samples, Samples] | None = None) -> None:
        """Fold a whole run's records at once (rebuilding metrics.prom from records.jsonl). `gap_samples`:
        the run's ITL and ITL-per-token samples already sorted (metrics.summary.build builds them), which
        makes their histograms one pass instead of a search per sample."""
        with self._lock:
            self._fold(frame, gap_samples)

    def _labels(self, frame: RequestFrame) -> tuple[np.ndarray, list[LabelValues], np.ndarray, list[LabelValues]]:
        """Per request: an index into a list of bucket label tuples and one into status label tuples."""
        cfg = self.config
        prompt = range_codes(frame.prompt_tokens, tuple(cfg.prompt_bucket_edges))
        cache = cache_classes(frame.cached_tokens, frame.prompt_tokens, full_ratio=cfg.cache_full_ratio,
                              absent_is_zero=cfg.absent_cache_is_zero)
        tags = [frame.tags.get(k, [None] * frame.n) for k in TAG_LABELS]
        bucket_keys: dict[LabelValues, int] = {}
        status_keys: dict[LabelValues, int] = {}
        b_ids = np.empty(frame.n, dtype=np.int64)
        s_ids = np.empty(frame.n, dtype=np.int64)
        prompt_labels = [self._prompt_labels[c] for c in prompt.tolist()]
        cache_labels = [CACHE_CLASSES[c] for c in cache.tolist()]
        status_labels = [STATUSES[c] for c in frame.status.tolist()]
        kinds = [k or "" for k in frame.error_kind]
        sent = ["true" if s else "false" for s in frame.has_sent.tolist()]
        tag_values = [[v or "" for v in t] for t in tags]
        models = [m or "" for m in frame.model] if len(frame.model) == frame.n else [""] * frame.n
        for i, key in enumerate(zip(prompt_labels, cache_labels, *tag_values, models, strict=True)):
            b_ids[i] = bucket_keys.setdefault(key, len(bucket_keys))
        for i, key in enumerate(zip(status_labels, kinds, sent, *tag_values, models, strict=True)):
            s_ids[i] = status_keys.setdefault(key, len(status_keys))
        return b_ids, list(bucket_keys), s_ids, list(status_keys)

    def _fold(self, frame: RequestFrame, gap_samples: tuple[Samples, Samples] | None = None) -> None:
        cfg = self.config
        b_ids, b_labels, s_ids, s_labels = self._labels(frame)
        self.requests.inc_batch(s_ids, np.ones(frame.n), s_labels)
        cooldown = cfg.cooldown_s if cfg.schedule_end_s is not None else 0.0
        measured = measurement_window(frame, warmup_s=cfg.warmup_s, cooldown_s=cooldown,
                                      schedule_end_s=cfg.schedule_end_s).measured
        sampled = measured & (frame.status == OK)
        gaps = derive.chunk_gaps(frame)
        ttft, tpot, e2e = derive.ttft_s(frame), derive.tpot_s(frame), derive.e2e_s(frame)
        max_itl = derive.max_itl_s(gaps, frame.n)
        deadlines = cfg.slo.fluidity_deadlines()
        fluid = fluidity_index(frame, *deadlines, sampled) if deadlines else np.full(frame.n, np.nan)
        ttfo = answer.ttfo_s(frame)
        good = good_requests(cfg.slo, ok_with_content=(frame.status == OK) & (frame.chunk_count > 0), ttft_s=ttft,
                             tpot_s=tpot, e2e_s=e2e, max_itl_s=max_itl, fluidity=fluid, ttfo_s=ttfo) & measured
        evaluated = measured & ~excluded_from_goodput(frame)  # planned cancellations: metrics.summary.cancels
        self.evaluated.inc_batch(b_ids[evaluated], np.ones(int(evaluated.sum())), b_labels)
        for key in b_labels:  # a zero good-count series per label set, so attainment is 0, not absent
            self.good.ensure(key)
        self.good.inc_batch(b_ids[good], np.ones(int(good.sum())), b_labels)
        for kind, values in (("prompt", frame.prompt_tokens), ("cached_prompt", frame.cached_tokens),
                             ("output", frame.output_tokens)):
            self.tokens[kind].inc_batch(b_ids[sampled], values[sampled], b_labels)
        per_request = {"ttft": ttft, "ttft_from_schedule": derive.ttft_from_schedule_s(frame), "tpot": tpot,
                       "e2e": e2e, "dispatch_lag": derive.dispatch_lag_s(frame)}
        for name, values in per_request.items():
            self.histograms[name].observe_batch(b_ids[sampled], values[sampled], b_labels)
        self.answers.fold(frame, sampled, ttfo, b_ids, b_labels)
        if gap_samples is not None:
            del gaps
            sample_ids = np.where(sampled, b_ids, len(b_labels))  # not sampled: not observed
            ids: dict[int, np.ndarray] = {}
            for name, s in zip(("itl", "itl_per_token"), gap_samples, strict=True):
                if id(s) not in ids:
                    ids[id(s)] = sample_ids[s.owner]
                self.histograms[name].observe_sorted(s.values, ids[id(s)], b_labels, weights=s.weights)
            return
        owner = gaps.owner
        in_sample = sampled[owner]
        gap_labels = b_ids[owner[in_sample]]
        self.histograms["itl"].observe_batch(gap_labels, derive.itl_s(gaps)[in_sample], b_labels)
        token_ns, repeats = derive.itl_token_weighted_ns(gaps)
        self.histograms["itl_per_token"].observe_batch(gap_labels, token_ns[in_sample] / 1e9, b_labels,
                                                       weights=repeats[in_sample])

    def _gauges(self) -> Iterator[Metric]:
        cfg = self.config
        info = GaugeMetricFamily("goodput_run_info", "The run these metrics belong to (value 1).",
                                 labels=["run_id", "model", "load"])
        info.add_metric([cfg.run_id, cfg.model, cfg.load], 1.0)
        yield info
        slo = GaugeMetricFamily("goodput_slo_threshold_seconds", "The SLO bounds the run judges against.",
                                labels=["slo"])
        for name, value in cfg.slo_thresholds().items():
            slo.add_metric([name], value)
        yield slo
        if cfg.offered_rps is not None:
            yield GaugeMetricFamily("goodput_offered_rate_requests_per_second",
                                    "Configured arrival rate (requests/s).", value=cfg.offered_rps)
        if self.state is not None:
            yield GaugeMetricFamily("goodput_in_flight_requests", "Requests dispatched and not yet finished.",
                                    value=float(self.state.in_flight))
            yield CounterMetricFamily("goodput_requests_dispatched", "Requests the run has started so far, sent "
                                      "or not; each ends as one goodput_requests_total.", value=float(self.state.sent))

    def collect(self) -> Iterator[Metric]:
        self.flush()
        with self._lock:
            instruments: list[BatchHistogram | BatchCounter] = [
                *self.histograms.values(), self.requests, self.evaluated, self.good, *self.tokens.values(),
                *self.answers.instruments()]
            out = [inst.family() for inst in instruments]
        yield from out
        yield from self._gauges()
