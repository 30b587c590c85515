"""`summarize`: records → the whole `summary.json`, schema version SCHEMA_VERSION (2).

Which samples count: only measured requests (see metrics.summary.window) with status "ok" contribute latency
samples; failed and cancelled ones are counted under `requests` and stay in the goodput denominator, except
planned cancellations and the turns their sessions never sent (metrics.summary.cancels).
Every latency block is `{count, mean, std, min, p50, p90, p95, p99, p999, max}` in seconds (numpy
`linear` percentiles, population std); an empty one has count 0 and nulls. `fluidity` is the same
block over the unitless per-request fluidity index, empty unless fluidity was asked for (SLO.fluidity_deadlines).

`requests` counts every record: `records` (one per request the run started), split two ways —
`sent` (its bytes were written) + `never_sent` (failed, e.g. a connect error, or cancelled before
that) + `lost_with_worker` (in flight or never sent: its worker died, metrics.summary.lost), and
`succeeded` + `failed` + `cancelled`; the `in_window_*` counts split the measured ones
(REQUEST_IDENTITIES lists every identity). A request that succeeded was always sent.

The client-saturation flag looks at dispatch lag of every measured request that was sent, whatever
its outcome (lag happens before the server answers).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from metrics.burst import burst_section
from metrics.latency import PERCENTILE_METHOD, Samples, derive, fluidity_index, stats_by_dimension
from metrics.records import CANCELLED, ERROR, OK, RequestFrame, RequestRecord, frame_from_records
from metrics.results import SUMMARY_SCHEMA_VERSION
from metrics.slo import SLO, good_requests, slo_summary
from metrics.summary.answers import answer_sections, answer_values, bucket_sections, shown, split_blocks
from metrics.summary.buckets import (
    DEFAULT_OUTPUT_EDGES,
    DEFAULT_PROMPT_EDGES,
    Dimension,
    cache_dimension,
    check_edges,
    image_dimensions,
    model_dimensions,
    output_dimension,
    prompt_dimension,
    tag_dimensions,
    turn_dimensions,
)
from metrics.summary.cancels import cancel_counts, excluded_from_goodput
from metrics.summary.failures import failures_section
from metrics.summary.lost import lost_with_worker
from metrics.summary.server_side import server_section
from metrics.summary.sessions import sessions_section
from metrics.summary.tokens import cache_share, tokens_section
from metrics.summary.window import Window, measurement_window, throughput

if TYPE_CHECKING:  # the views are imported where a summary is made: a run imports this before its first request
    from metrics.results import Bucket, Goodput, Json, JsonObject, Requests, Saturation, SummaryDocument
    from metrics.summary.answers import Rows

SCHEMA_VERSION = SUMMARY_SCHEMA_VERSION  # metrics.results.versions
# How the `requests` counters add up; README and the console state the same.
REQUEST_IDENTITIES: tuple[str, ...] = (
    "records = sent + never_sent + lost_with_worker",
    "records = succeeded + failed + cancelled",
    "never_sent = failed_before_send + cancelled_before_send",
    "in_window = in_window_ok + in_window_failed + in_window_cancelled",
)
BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]


@dataclass(slots=True)
class SummaryConfig:
    slo: SLO = field(default_factory=SLO)
    warmup_s: float = 0.0
    cooldown_s: float = 0.0
    schedule_end_s: float | None = None
    prompt_bucket_edges: Sequence[int] = DEFAULT_PROMPT_EDGES
    output_bucket_edges: Sequence[int] = DEFAULT_OUTPUT_EDGES
    cache_full_ratio: float = 0.9
    absent_cache_is_zero: bool = False
    stall_threshold_s: float = 1.0
    lag_threshold_s: float = 0.010  # client saturated when dispatch-lag p99 exceeds this

    def __post_init__(self) -> None:
        """Reject bad settings before any work, with messages fit for the CLI."""
        for name in ("warmup_s", "cooldown_s", "lag_threshold_s"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.stall_threshold_s <= 0:
            raise ValueError(f"stall_threshold_s must be > 0, got {self.stall_threshold_s}")
        if not 0.0 < self.cache_full_ratio <= 1.0:
            raise ValueError(f"cache_full_ratio must be in (0, 1], got {self.cache_full_ratio}")
        self.prompt_bucket_edges = check_edges(self.prompt_bucket_edges, "prompt")
        self.output_bucket_edges = check_edges(self.output_bucket_edges, "output")


@dataclass(slots=True)
class PerRequest:
    """Everything derived once per run; blocks for any request subset are read from it."""

    samples: dict[str, Samples]
    ttft: FloatArray
    good: BoolArray
    stall_count: npt.NDArray[np.int64]
    stall_total_s: FloatArray


def _gap_samples(gaps: derive.Gaps) -> tuple[Samples, Samples]:
    """ITL and ITL per token. Per token is identical to ITL when every chunk carries one token: the
    same object then, so its blocks are reused; otherwise the two sorts run on two threads (numpy's
    sort and arithmetic release the GIL)."""
    if gaps.one_token_each:
        itl = Samples.from_gaps(gaps.ns, gaps.off, reuse=True)  # sorts in the gaps' memory: done with
        return itl, itl
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="itl") as pool:
        per_token = pool.submit(Samples.from_gaps, gaps.ns, gaps.off, gaps.tokens)
        itl = Samples.from_gaps(gaps.ns, gaps.off)
        return itl, per_token.result()


def derive_per_request(frame: RequestFrame, config: SummaryConfig, sampled: BoolArray,
                       answers: bool | None = None) -> PerRequest:
    """`answers`: derive the reasoning and tool-call figures (metrics.summary.answers); None: when shown."""
    gaps = derive.chunk_gaps(frame)
    ttft = derive.ttft_s(frame)
    tpot = derive.tpot_s(frame)
    e2e = derive.e2e_s(frame)
    max_itl = derive.max_itl_s(gaps, frame.n)
    deadlines = config.slo.fluidity_deadlines()
    fluid = fluidity_index(frame, *deadlines, sampled) if deadlines else np.full(frame.n, np.nan)
    count, total = derive.stalls(gaps, frame.n, config.stall_threshold_s)
    itl, per_token = _gap_samples(gaps)
    del gaps
    samples = {
        "ttft_s": Samples.per_request(ttft),
        "ttft_from_schedule_s": Samples.per_request(derive.ttft_from_schedule_s(frame)),
        "itl_s": itl,
        "itl_token_s": per_token,
        "tpot_s": Samples.per_request(tpot),
        "e2e_s": Samples.per_request(e2e),
        "e2e_close_s": Samples.per_request(derive.e2e_close_s(frame)),
        "e2e_from_schedule_s": Samples.per_request(derive.e2e_from_schedule_s(frame)),
        "dispatch_lag_s": Samples.per_request(derive.dispatch_lag_s(frame)),
        "max_itl_s": Samples.per_request(max_itl),
        "fluidity": Samples.per_request(fluid),
    }
    answer = answer_values(frame) if (shown(frame, config.slo) if answers is None else answers) else {}
    samples.update((name, Samples.per_request(values)) for name, values in answer.items())
    ok_with_content = (frame.status == OK) & (frame.chunk_count > 0)
    good = good_requests(
        config.slo, ok_with_content=ok_with_content, ttft_s=ttft, tpot_s=tpot, e2e_s=e2e,
        max_itl_s=max_itl, fluidity=fluid, ttfo_s=answer.get("ttfo_s"),
    )
    return PerRequest(samples, ttft, good, count, total)


def bucket_dimensions(frame: RequestFrame, config: SummaryConfig) -> list[Dimension]:
    """The bucket dimensions of a run, in summary order: prompt tokens, cache class, output tokens, the
    conversation turn (runs with turns only), the model (runs of several models only), images per request
    (runs with images only), tags."""
    return [
        prompt_dimension(frame, config.prompt_bucket_edges),
        cache_dimension(frame, full_ratio=config.cache_full_ratio, absent_is_zero=config.absent_cache_is_zero),
        output_dimension(frame, config.output_bucket_edges),
        *turn_dimensions(frame),
        *model_dimensions(frame),
        *image_dimensions(frame),
        *tag_dimensions(frame),
    ]


def _blocks(per: PerRequest, sampled: BoolArray, dims: list[Dimension]) -> dict[str, Rows]:
    """Per metric: [[the whole run's block], then per dimension one block per label]; each sample set is
    read once for every dimension (a set shared by two metrics once for both)."""
    groups = [(np.zeros(sampled.shape[0], dtype=np.int64), 1), *((d.codes, len(d.labels)) for d in dims)]
    distinct = {id(s): s for s in per.samples.values()}

    def blocks(s: Samples) -> Rows:
        return [[one.block() for one in row] for row in stats_by_dimension(s, sampled, groups)]

    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="blocks") as pool:  # the two gap sets at once
        done = dict(zip(distinct, pool.map(blocks, distinct.values()), strict=True))
    return {name: done[id(s)] for name, s in per.samples.items()}


def _goodput(good: int, measured: int, duration_s: float | None) -> Goodput:
    """A bucket's goodput (the run's adds its SLO and the planned cancellations left out)."""
    from metrics.results import Goodput

    return Goodput(None, good, measured, good / measured if measured else None,
                   good / duration_s if duration_s else None)


def _buckets(
    frame: RequestFrame, per: PerRequest, window: Window, dims: list[Dimension],
    blocks: dict[str, Rows], own: dict[str, Rows],
) -> list[Bucket]:
    from metrics.results import Bucket

    measured = window.measured
    excluded = excluded_from_goodput(frame)
    out: list[Bucket] = []
    for d, dim in enumerate(dims, start=1):
        in_measured = np.bincount(dim.codes[measured], minlength=len(dim.labels))
        for code, label in enumerate(dim.labels):
            if in_measured[code] == 0:
                continue
            mine = measured & (dim.codes == code)
            good = int((per.good & mine).sum())
            denominator = int(in_measured[code]) - int((mine & excluded).sum())  # metrics.summary.cancels
            ok = mine & (frame.status == OK)
            out.append(Bucket(
                dimension=dim.name,
                label=label,
                measured=int(in_measured[code]),
                ok=int(ok.sum()),
                failed=int((mine & (frame.status == ERROR)).sum()),
                cancelled=int((mine & (frame.status == CANCELLED)).sum()),
                good=good,
                latency={name: rows[d][code] for name, rows in blocks.items()},
                goodput=_goodput(good, denominator, window.duration_s),
                prefix_cache=cache_share(frame, ok),
                sections=bucket_sections(own, d, code),
            ))
    return out


def _requests(frame: RequestFrame, window: Window) -> Requests:
    """Request counts that add up (REQUEST_IDENTITIES): one record per request the run started."""
    errors = Counter(
        kind or "unknown" for kind, status in zip(frame.error_kind, frame.status.tolist(), strict=True) if status != OK
    )
    m = window.measured
    lost = lost_with_worker(frame)  # sent or not, nobody knows: counted apart (metrics.summary.lost)
    unsent = ~frame.has_sent & ~lost
    cancels = cancel_counts(frame, m)
    failures = failures_section(frame)
    from metrics.results import Requests

    return Requests(
        records=frame.n,
        sent=int(frame.has_sent.sum()),
        never_sent=int(unsent.sum()),
        lost_with_worker=int(lost.sum()),
        succeeded=int((frame.status == OK).sum()),
        failed=int((frame.status == ERROR).sum()),
        cancelled=int((frame.status == CANCELLED).sum()),
        failed_before_send=int((unsent & (frame.status == ERROR)).sum()),
        cancelled_before_send=int((unsent & (frame.status == CANCELLED)).sum()),
        errors=dict(sorted(errors.items())),
        in_window=int(m.sum()),
        in_window_ok=int((m & (frame.status == OK)).sum()),
        in_window_failed=int((m & (frame.status == ERROR)).sum()),
        in_window_cancelled=int((m & (frame.status == CANCELLED)).sum()),
        ok_without_content=int((m & (frame.status == OK) & (frame.chunk_count == 0)).sum()),
        planned_cancels=cancels["planned_cancels"],
        in_window_planned_cancels=cancels["in_window_planned_cancels"],
        turns_abandoned_after_cancel=cancels["turns_abandoned_after_cancel"],
        failure_messages=failures.messages,
        failure_messages_distinct=failures.distinct,
        stopped_before_max_tokens=failures.stopped_before_max_tokens,
    )


def _saturation(frame: RequestFrame, window: Window, threshold_s: float) -> Saturation:
    from metrics.results import Saturation

    lag = derive.dispatch_lag_s(frame)[window.measured & frame.has_sent]
    p99 = float(np.percentile(lag, 99)) if lag.size else None
    return Saturation(p99 is not None and p99 > threshold_s, p99, threshold_s)


def summarize(
    records: Sequence[RequestRecord] | RequestFrame, config: SummaryConfig, run: Mapping[str, Json]
) -> JsonObject:
    """The summary.json content. `records` may be a RequestFrame already (the fast report path)."""
    frame = records if isinstance(records, RequestFrame) else frame_from_records(records)
    return summarize_frame(frame, config, run)[0]


def summarize_frame(frame: RequestFrame, config: SummaryConfig, run: Mapping[str, Json]) -> tuple[JsonObject, PerRequest]:
    """The summary and the per-request derivations behind it (their sorted samples serve metrics.prom)."""
    document, per = summary_document(frame, config, run)
    return document.to_json(), per


def summary_document(frame: RequestFrame, config: SummaryConfig,
                     run: Mapping[str, Json]) -> tuple[SummaryDocument, PerRequest]:
    """The summary's typed sections (written in one step by SummaryDocument.to_json) and the derivations."""
    from metrics.results import Stalls, SummaryDocument, json_object, replace, slo_bounds

    window = measurement_window(
        frame, warmup_s=config.warmup_s, cooldown_s=config.cooldown_s, schedule_end_s=config.schedule_end_s
    )
    sampled = window.measured & (frame.status == OK)
    per = derive_per_request(frame, config, sampled)
    dims = bucket_dimensions(frame, config)
    blocks = _blocks(per, sampled, dims)
    own = split_blocks(blocks)  # the reasoning and tool-call counts: sections of their own
    stalled = sampled & (per.stall_count > 0)
    excluded = int((excluded_from_goodput(frame) & window.measured).sum())  # metrics.summary.cancels
    measured = int(window.measured.sum()) - excluded
    good = int((per.good & window.measured).sum())
    reasoning, tool_calls = answer_sections(frame, sampled, own)
    document = SummaryDocument(
        run=run,
        window=window.view(),
        percentile_method=PERCENTILE_METHOD,
        client_saturation=_saturation(frame, window, config.lag_threshold_s),
        requests=_requests(frame, window),
        throughput=throughput(frame, window),
        latency={name: rows[0][0] for name, rows in blocks.items()},
        stalls=Stalls(config.stall_threshold_s, int(per.stall_count[sampled].sum()),
                      float(per.stall_total_s[sampled].sum()), int(stalled.sum())),
        tokens=tokens_section(frame, sampled),
        burst_delivered=json_object(burst_section(derive.tpot_s(frame), sampled)),
        goodput=replace(_goodput(good, measured, window.duration_s), slo=slo_bounds(slo_summary(config.slo)),
                        excluded_planned_cancels=excluded),
        buckets=tuple(_buckets(frame, per, window, dims, blocks, own)),
        server=server_section(frame, sampled, per.ttft),
        reasoning=reasoning,
        tool_calls=tool_calls,
        sessions=sessions_section(frame, window.measured),
    )
    return document, per
