"""Writing the reports: `write_report` (a run directory → report.html) and `write_compare_report`.

A run report reads summary.json (it must exist: `goodput run` and `goodput report` write it first) and the
records, and is given the metric settings the summary was made with (loadgen.run.html_report reads them
from run.json), so it derives its samples exactly as the summary did. Files are written atomically.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from exporters.html.assets import library_src, results_dir, shared_library
from exporters.html.compare_page import compare_page
from exporters.html.page import render_page
from exporters.html.run_data import RunData, read_server_series, run_data
from exporters.html.run_page import run_page
from metrics.gate import Row, RunView, Verdict, evaluate_one, parse_threshold
from metrics.latency import Samples
from metrics.records import RequestFrame
from metrics.results import RECORDS_FILE, RunDocument, read_summary, write_atomic
from metrics.results import REPORT_FILE as REPORT_FILE
from metrics.summary import SummaryConfig

if TYPE_CHECKING:
    from metrics.results import Json, JsonObject


def read_frame(run_dir: Path) -> RequestFrame:
    """The run's records as a frame, read the way loadgen.run.outputs reads them (Arrow, else line by line;
    lines that are not records are skipped, as in the summary)."""
    import pyarrow as pa

    from metrics.records import frame_from_table, read_jsonl_frame, read_records_checked

    path = run_dir / RECORDS_FILE
    if not path.is_file():
        raise ValueError(f"no {RECORDS_FILE} in {run_dir}")
    try:
        table, _ = read_records_checked(path)
        return frame_from_table(table)
    except pa.ArrowException:
        return read_jsonl_frame(path)[0]


def run_thresholds(run: RunDocument) -> list[str]:
    """The thresholds a run was gated with, as written in its run.json (none for a run without a gate)."""
    return list(run.thresholds)


def run_gate_baseline(run: RunDocument) -> str | None:
    """The baseline run directory a run's gate compared with, if any (as written in its run.json)."""
    return run.gate_baseline


def judge_thresholds(data: RunData, baseline: RunView | None = None) -> tuple[list[Verdict], list[tuple[str, str]]]:
    """The run's thresholds judged on its summary (and its records where the summary lacks the number), as its
    gate judged them; one relative to a baseline run is listed as not judged when no `baseline` is given."""
    def records() -> Any:
        from metrics.gate import RunSamples

        return RunSamples(data.frame, data.config)

    view = RunView(dict(data.summary), records=records)
    verdicts, unjudged = [], []
    for text in run_thresholds(data.run):
        try:
            threshold = parse_threshold(text)
            if threshold.needs_baseline and baseline is None:
                unjudged.append((text, "relative to a baseline run, which this report did not load: "
                                       "`goodput gate DIR --baseline BASE` judges it"))
                continue
            verdicts.append(evaluate_one(threshold, view, baseline))
        except (ValueError, LookupError) as exc:
            unjudged.append((text, str(exc)))
    return verdicts, unjudged


def load_run_data(run_dir: Path, config: SummaryConfig, *, frame: RequestFrame | None = None,
                  gaps: tuple[Samples, Samples] | None = None) -> RunData:
    """A run directory, ready to draw (`config`: the metric settings its summary was made with)."""
    summary = read_summary(run_dir)
    run = RunDocument.from_json(summary_run(summary))
    return run_data(run_label(run_dir), summary, run, frame if frame is not None else read_frame(run_dir), config,
                    gaps=gaps, server_series=read_server_series(run_dir))


def summary_run(summary: Mapping[str, Json]) -> JsonObject:
    """The `run` entry of a summary: run.json as the summary saw it (with any `--slo` of `goodput report`)."""
    run = summary.get("run")
    return run if isinstance(run, dict) else {}


def run_label(run_dir: Path) -> str:
    return run_dir.resolve().name or str(run_dir)


def write_report(run_dir: Path, config: SummaryConfig, *, path: Path | None = None, frame: RequestFrame | None = None,
                 gaps: tuple[Samples, Samples] | None = None, baseline: RunView | None = None) -> Path:
    """Write the HTML report of a run directory to `path` (default DIR/report.html) and return where.

    `config`: the metric settings its summary was made with; `frame` and `gaps` (the ITL and ITL-per-token samples, sorted) save reading and sorting them again when
    the caller has them from writing the summary; `baseline`, the baseline run of the gate (for thresholds
    relative to it). A point of a sweep or capacity search (DIR/points/<label>/) loads the plotting library
    from DIR's shared copy instead of embedding it. ValueError: not a run directory with a summary; OSError:
    writing failed."""
    data = load_run_data(run_dir, config, frame=frame, gaps=gaps)
    verdicts, unjudged = judge_thresholds(data, baseline)
    out = path if path is not None else run_dir / REPORT_FILE
    page = render_page(run_page(data, verdicts, unjudged), library_src=point_library_src(run_dir, out))
    write_atomic(out, page.encode("utf-8"))
    return out


def point_library_src(run_dir: Path, out: Path) -> str | None:
    """For a point of a sweep or capacity search written to its own report.html: the relative URL of the
    plotting library the directory's pages share (written there if missing). None for any other page, which
    embeds the library."""
    directory = results_dir(run_dir)
    if directory is None or out.resolve() != (run_dir / REPORT_FILE).resolve():
        return None
    return library_src(shared_library(directory), out)


def write_compare_report(path: Path, baselines: Sequence[RunData], candidate: RunData, rows: Sequence[Row] = (),
                         rule: str = "") -> Path:
    """Write the comparison page of runs already loaded (`rows`: the compare table, `rule`: how it flags)."""
    write_atomic(path, render_page(compare_page(baselines, candidate, rows, rule)).encode("utf-8"))
    return path
