"""The run report's reasoning and tool-call section: present with summary.json's figures when a request
reasoned or called a tool (values by hand in tests.metrics._reasoning), absent otherwise."""

from __future__ import annotations

import json
from pathlib import Path

from exporters.html.page import Chart, Page, Table, render_page
from exporters.html.run_data import RunData
from exporters.html.run_page import run_page
from exporters.html.tables import slo_table
from exporters.html.write import load_run_data
from loadgen.run.outputs import run_summary_config
from metrics.records.record import RequestRecord
from metrics.results import RunDocument
from tests.exporters._html_runs import RUN, write_run
from tests.metrics._reasoning import reasoning_records
from tests.metrics._records import MS, rec


def _page_of(path: Path, records: list[RequestRecord], slo: list[str]) -> tuple[RunData, Page]:
    run_dir = write_run(path, records, run={**RUN, "settings": {"slo": slo}})
    summary = json.loads((run_dir / "summary.json").read_text())
    data = load_run_data(run_dir, run_summary_config(RunDocument.from_json(summary["run"])))
    return data, run_page(data)


def test_the_section_shows_ttfo_and_reasoning(tmp_path: Path) -> None:
    data, page = _page_of(tmp_path / "r", reasoning_records(), ["ttfo=120ms"])
    section = next(s for s in page.sections if s.title == "Reasoning and tool calls")
    table = next(i for i in section.items if isinstance(i, Table))
    rows = {str(r[0]): [str(c) for c in r[1:]] for r in table.rows}
    # samples, mean, min, p50, ...: TTFO 50, 110, 310 ms; reasoning time 100, 300 ms; R 0, 20, 30
    assert rows["TTFO: first answer token or tool call"][:4] == ["3", "156.7 ms", "50 ms", "110 ms"]
    assert rows["reasoning time"][:4] == ["2", "200 ms", "100 ms", "200 ms"]
    assert rows["time to complete call"][0] == "1" and rows["time to complete call"][-1] == "395 ms"
    assert rows["reasoning tokens per request"][:4] == ["3", "16.67", "0", "20"]
    assert rows["tool calls per request"][-1] == "1"
    assert "2 of 3 measured successful requests reasoned" in table.note
    assert [c.figure["layout"]["title"]["text"] for c in section.items if isinstance(c, Chart)] == [
        "TTFO: distribution (CDF)", "Reasoning time: distribution (CDF)"]
    slo_rows = [str(r[0]) for r in slo_table(data).rows]
    assert slo_rows[0] == "TTFO ≤ 120 ms" and slo_table(data).rows[0][1] == "2 of 3"
    html = render_page(page)
    assert "Reasoning and tool calls" in html and "TTFO: first answer token or tool call" in html


def test_no_section_for_a_run_without_reasoning(tmp_path: Path) -> None:
    plain = [rec(i, a=50 * i, d=50 * i, chunks=[50 * i + 30, 50 * i + 45], answer_ns=(50 * i + 30) * MS,
                 finish_reason="stop") for i in range(20)]
    _, page = _page_of(tmp_path / "r", plain, ["ttft=100ms"])
    assert "Reasoning and tool calls" not in [s.title for s in page.sections]
    assert "TTFO" not in render_page(page)
