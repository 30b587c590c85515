"""Everything a report draws from one run: its summary, its records as a frame, and the per-request
values and sorted samples behind summary.json, derived by the same functions with the same window.

`goodput report` and `goodput run` already hold the frame and the sorted ITL samples when they write the
report, and pass them in (sorting 20 M gaps again would double the time of a large report); a report of a
run directory on its own reads them from records.jsonl.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from exporters.html.server_data import ScrapeRow, scrape_row
from metrics import good_requests
from metrics.latency import Samples, answer, derive, fluidity_index
from metrics.records import OK, RequestFrame
from metrics.results import SERVER_SERIES_FILE, RunDocument, SummaryView
from metrics.summary import Dimension, SummaryConfig, Window, bucket_dimensions, measurement_window, shown

if TYPE_CHECKING:
    from metrics.results import Json

BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]

PER_REQUEST = ("ttft_s", "ttft_from_schedule_s", "tpot_s", "e2e_s", "dispatch_lag_s")


@dataclass(slots=True)
class RunData:
    """One run, ready to draw. `values` hold one value per request (NaN: not defined for it), `samples`
    the same sorted, plus the ITL gap samples; `sampled` marks the requests that contribute latency
    samples (measured and ok), as in summary.json."""

    label: str
    summary: Mapping[str, Json]  # summary.json as read
    run: RunDocument  # run.json (or the summary's copy of it), parsed once
    frame: RequestFrame
    config: SummaryConfig
    window: Window
    values: dict[str, FloatArray]
    samples: dict[str, Samples]
    good: BoolArray
    dimensions: list[Dimension]
    view: SummaryView  # `summary` parsed once (metrics.results.summary_view)
    server_series: list[ScrapeRow] = field(default_factory=list)

    @property
    def sampled(self) -> BoolArray:
        sampled: BoolArray = self.window.measured & (self.frame.status == OK)
        return sampled


def gap_samples(frame: RequestFrame) -> tuple[Samples, Samples]:
    """ITL per chunk and per token, sorted (as metrics.summary.build derives them)."""
    gaps = derive.chunk_gaps(frame)
    itl = Samples.from_gaps(gaps.ns, gaps.off)
    return itl, (itl if gaps.tokens is None else Samples.from_gaps(gaps.ns, gaps.off, gaps.tokens))


def run_data(label: str, summary: Mapping[str, Json], run: RunDocument, frame: RequestFrame, config: SummaryConfig,
             *, gaps: tuple[Samples, Samples] | None = None, server_series: list[ScrapeRow] | None = None) -> RunData:
    """Derive what the charts need; `gaps` are the run's ITL samples when the caller has them sorted already."""
    window = measurement_window(frame, warmup_s=config.warmup_s, cooldown_s=config.cooldown_s,
                                schedule_end_s=config.schedule_end_s)
    values = {
        "ttft_s": derive.ttft_s(frame),
        "ttft_from_schedule_s": derive.ttft_from_schedule_s(frame),
        "tpot_s": derive.tpot_s(frame),
        "e2e_s": derive.e2e_s(frame),
        "dispatch_lag_s": derive.dispatch_lag_s(frame),
    }
    itl, itl_token = gaps if gaps is not None else gap_samples(frame)
    samples = {name: Samples.per_request(v) for name, v in values.items()}
    samples["itl_s"], samples["itl_token_s"] = itl, itl_token
    sampled = window.measured & (frame.status == OK)
    values.update(_slo_values(frame, config, sampled))
    if shown(frame, config.slo):  # TTFO and reasoning time, as summary.json shows them
        answers = {"ttfo_s": answer.ttfo_s(frame), "reasoning_time_s": answer.reasoning_time_s(frame)}
        values.update(answers)
        samples.update((name, Samples.per_request(v)) for name, v in answers.items())
    none = np.full(frame.n, np.nan)
    good = good_requests(config.slo, ok_with_content=(frame.status == OK) & (frame.chunk_count > 0),
                         ttft_s=values["ttft_s"], tpot_s=values["tpot_s"], e2e_s=values["e2e_s"],
                         max_itl_s=values.get("max_itl_s", none), fluidity=values.get("fluidity", none),
                         ttfo_s=values.get("ttfo_s"))
    return RunData(label=label, summary=summary, run=run, frame=frame, config=config, window=window, values=values,
                   samples=samples, good=good, dimensions=bucket_dimensions(frame, config),
                   view=SummaryView.from_json(summary),
                   server_series=server_series or [])


def _slo_values(frame: RequestFrame, config: SummaryConfig, sampled: BoolArray) -> dict[str, FloatArray]:
    """The per-request largest ITL and fluidity index, derived only when an SLO judges them (as
    metrics.summary.build does; the gaps of a large run are costly to walk again)."""
    slo = config.slo
    out = {}
    if slo.itl_max_s is not None:
        out["max_itl_s"] = derive.max_itl_s(derive.chunk_gaps(frame), frame.n)
    deadlines = slo.fluidity_deadlines()
    if deadlines:
        out["fluidity"] = fluidity_index(frame, *deadlines, sampled)
    return out


def read_server_series(run_dir: Path) -> list[ScrapeRow]:
    """The server gauges scraped during the run, one row per scrape (none when the file is absent; lines
    that are not JSON objects are skipped, and values that are not numbers: the chart shows what could be
    read)."""
    path = run_dir / SERVER_SERIES_FILE
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict):
            rows.append(scrape_row(row))
    return rows
