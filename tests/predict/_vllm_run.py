"""A run directory as `goodput run --continuous-usage` leaves it against vLLM, built from a known step model.

The virtual engine (loadgen.predict.virtual, the reference scheduler on a clock the model advances) serves
bursts of requests that arrive together on an idle engine: their prompts share one prefill step, in which
nothing decodes, then they decode together. vLLM sends no server time per chunk, so the records hold the
client's receive times (here exactly the step ends) and one token per chunk by continuous usage. The server
side is what vLLM's /metrics would show, scraped by goodput's own code: prometheus_client renders vLLM's
metric names, types and buckets (histograms as _bucket/_sum/_count, counters as _total, the info gauge
vllm:cache_config_info with every CacheConfig field as a string label), `parse_exposition` reads each
scrape, `prometheus_section` writes server_prometheus.json and `series_point` the lines of
server_metrics.jsonl. The scrape before the run sees earlier traffic, which the delta removes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from loadgen.predict.step_model import StepModel
from loadgen.predict.virtual import make_engine
from loadgen.run.scrape import parse_exposition, prometheus_section, series_point
from metrics.records.record import RequestRecord
from refserver.api.server_metrics import ITL_BUCKETS, REQUEST_LATENCY_BUCKETS
from refserver.engine.types import SamplingParams

START_UNIX_S = 1_700_000_000.0  # run.json's start_unix_s: the wall-clock time of the records' anchor
LABELS = {"model_name": "meta-llama/Llama-3.1-8B-Instruct", "engine": "0"}


@dataclass(slots=True)
class Truth:
    """What the server really did, per request, for the tests' hand-derived expectations."""

    prefill_s: dict[int, float] = field(default_factory=dict)  # per request id: first scheduled → first token
    decode_s: dict[int, float] = field(default_factory=dict)  # first token → last token
    queue_s: dict[int, float] = field(default_factory=dict)  # arrival → first scheduled
    running: list[tuple[float, int]] = field(default_factory=list)  # (instant, requests in the step then)


def simulate_bursts(model: StepModel, bursts: list[list[int]], *, gap_s: float, max_tokens: int,
                    sample_every_s: float) -> tuple[list[RequestRecord], Truth]:
    """Burst b (its prompts' lengths) arrives at b × gap_s; the gauges are sampled every sample_every_s."""
    engine, runner = make_engine(model, max_positions=8192, waiting=64)
    truth = Truth()
    records: list[RequestRecord] = []
    next_sample = sample_every_s / 2
    for b, prompts in enumerate(bursts):
        t0 = b * gap_s
        runner.clock.t = max(runner.clock.t, t0)
        ids: list[int] = []
        for p in prompts:
            rid = len(records) + len(ids)
            engine.add_request(str(rid), [(rid * 131 + i) % 250 for i in range(p)],
                               SamplingParams(max_tokens=max_tokens, ignore_eos=True), arrival_s=t0)
            ids.append(rid)
        times: dict[int, list[float]] = {i: [] for i in ids}
        while engine.has_unfinished():
            start = runner.clock.t
            events = engine.step()
            while next_sample <= runner.clock.t:  # the gauges during (start, end]: this step's requests
                truth.running.append((next_sample, len(events) if next_sample > start else 0))
                next_sample += sample_every_s
            for name, event in events:
                k = int(name)
                times[k].append(event.now_s)
                if event.finished:
                    assert event.scheduled_s is not None and event.first_token_s is not None
                    truth.prefill_s[k] = event.first_token_s - event.scheduled_s
                    truth.decode_s[k] = event.now_s - event.first_token_s
                    truth.queue_s[k] = event.scheduled_s - event.arrival_s
        for rid, p in zip(ids, prompts, strict=True):
            ts = times[rid]
            records.append(RequestRecord(
                id=rid, intended_ns=int(t0 * 1e9), sent_ns=int(t0 * 1e9), chunk_ns=[int(t * 1e9) for t in ts],
                chunk_tokens=[1] * len(ts), token_source="usage_delta", output_tokens=len(ts),
                output_tokens_estimated=False, prompt_tokens=p, prompt_tokens_estimated=False, cached_tokens=0))
    while next_sample <= runner.clock.t + sample_every_s:
        truth.running.append((next_sample, 0))
        next_sample += sample_every_s
    return records, truth


def cache_config_labels(model: StepModel) -> dict[str, str]:
    """vLLM's CacheConfig as its info gauge publishes it: every field, str() of its value."""
    lim = model.limits
    return {"block_size": str(lim.block_size), "cache_dtype": "auto", "calculate_kv_scales": "False",
            "enable_prefix_caching": str(lim.enable_prefix_caching), "gpu_memory_utilization": "0.9",
            "num_cpu_blocks": "None", "num_gpu_blocks": str(lim.num_blocks), "num_gpu_blocks_override": "None",
            "prefix_caching_hash_algo": "sha256", "swap_space": "4"}


class FakeVllmMetrics:
    """The families goodput reads, named, typed and bucketed as vLLM's loggers.py registers them."""

    def __init__(self, labels: dict[str, str]) -> None:
        self.registry = CollectorRegistry()
        names = list(LABELS)
        reg = self.registry

        def hist(name: str, doc: str, buckets: tuple[float, ...]) -> Histogram:
            return Histogram(name, doc, names, buckets=buckets, registry=reg)

        self.prefill = hist("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.",
                            REQUEST_LATENCY_BUCKETS).labels(**LABELS)
        self.decode = hist("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.",
                           REQUEST_LATENCY_BUCKETS).labels(**LABELS)
        self.queue = hist("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.",
                          REQUEST_LATENCY_BUCKETS).labels(**LABELS)
        self.itl = hist("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
                        ITL_BUCKETS).labels(**LABELS)
        self.generation = Counter("vllm:generation_tokens", "Number of generation tokens processed.", names,
                                  registry=reg).labels(**LABELS)
        self.running = Gauge("vllm:num_requests_running", "Number of requests in model execution batches.", names,
                             registry=reg).labels(**LABELS)
        self.waiting = Gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", names,
                             registry=reg).labels(**LABELS)
        info = Gauge("vllm:cache_config_info", "Information of the LLMEngine CacheConfig", list(labels), registry=reg)
        info.labels(**labels).set(1)

    def observe(self, queue_s: float, prefill_s: float, decode_s: float, output_tokens: int,
                gaps_s: list[float]) -> None:
        self.prefill.observe(prefill_s)
        self.decode.observe(decode_s)
        self.queue.observe(queue_s)
        self.generation.inc(output_tokens)
        for gap in gaps_s:
            self.itl.observe(gap)

    def text(self) -> str:
        return generate_latest(self.registry).decode()


def write_vllm_run(path: Path, model: StepModel, bursts: list[list[int]], *, gap_s: float = 1.5,
                   max_tokens: int = 16, sample_every_s: float = 0.7) -> tuple[Path, list[RequestRecord], Truth]:
    records, truth = simulate_bursts(model, bursts, gap_s=gap_s, max_tokens=max_tokens, sample_every_s=sample_every_s)
    path.mkdir(parents=True)
    (path / "records.jsonl").write_bytes(b"".join(r.to_json() for r in records))
    (path / "run.json").write_text(json.dumps({"schema_version": 1, "start_unix_s": START_UNIX_S, "complete": True}))
    metrics = FakeVllmMetrics(cache_config_labels(model))
    metrics.observe(0.2, 0.9, 2.0, 40, [0.05] * 39)  # traffic before the run: the 'before' scrape holds it
    snaps, series = [], []

    def scrape(at_s: float) -> None:
        snap = parse_exposition(metrics.text(), unix_s=START_UNIX_S + at_s)
        snaps.append(snap)
        series.append(series_point(snap, started_unix_s=START_UNIX_S + at_s, t_s=at_s + 1.0))

    scrape(-0.5)
    for at_s, running in truth.running:
        metrics.running.set(running)
        metrics.waiting.set(0)
        scrape(at_s)
    metrics.running.set(0)
    for rec in records:
        gaps = [(b - a) / 1e9 for a, b in zip(rec.chunk_ns, rec.chunk_ns[1:], strict=False)]
        metrics.observe(truth.queue_s[rec.id], truth.prefill_s[rec.id], truth.decode_s[rec.id], len(rec.chunk_ns), gaps)
    scrape(truth.running[-1][0] + 0.5)
    section = prometheus_section(snaps, series, url="http://127.0.0.1:8000/metrics", interval_s=0.7, failures=[])
    (path / "server_prometheus.json").write_text(json.dumps(section))
    (path / "server_metrics.jsonl").write_text("".join(json.dumps(p) + "\n" for p in series))
    return path, records, truth
