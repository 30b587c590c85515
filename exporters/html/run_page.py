"""The page of one run: header and flags, the summary tables, the SLO and thresholds, distributions, the
run over time, the server side and the roofline floors where known."""

from __future__ import annotations

from collections.abc import Sequence

from exporters.html import tables
from exporters.html.answer_section import answer_section
from exporters.html.dist_charts import distributions_section
from exporters.html.gpu_section import gpu_section
from exporters.html.header import run_flags, run_meta
from exporters.html.page import Page, Section
from exporters.html.run_data import RunData
from exporters.html.server_charts import roofline_section, server_section
from exporters.html.time_charts import over_time_section
from metrics.gate import Verdict


def run_page(data: RunData, verdicts: Sequence[Verdict] = (), unjudged: Sequence[tuple[str, str]] = ()) -> Page:
    """`verdicts`: the run's thresholds as judged; `unjudged`: (threshold, why not) for those that were not."""
    s = data.summary
    sections = [
        Section("Summary", [tables.requests_table(data.view), tables.throughput_table(data.view),
                            tables.latency_table(data.view)]),
        Section("SLO and thresholds", [tables.slo_table(data), tables.thresholds_table(verdicts, unjudged)]),
        Section("Buckets", [tables.buckets_table(data.view)]),
        distributions_section(data),
        over_time_section(data),
    ]
    for extra in (answer_section(data), server_section(data), gpu_section(data.view.gpu), roofline_section(data.view.roofline)):
        if extra is not None:
            sections.append(extra)
    return Page(title=f"goodput run report: {data.label}", meta=run_meta(data.label, data.view), flags=run_flags(s),
                sections=sections,
                footer="Written by goodput from summary.json and records.jsonl; the tables hold summary.json's figures.")
