"""Writing the pages of a sweep (DIR/sweep.html from sweep.json) and of a capacity search
(DIR/capacity.html from capacity.json), with relative links to each point's report.html where it has one.

The model and workload in the header are read from the first finished point's run.json: sweep.json and
capacity.json keep the run spec, where an embedded server's model is only resolved once it has started.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote

from exporters.html.assets import library_src, shared_library
from exporters.html.capacity_page import capacity_page
from exporters.html.header import workload_text
from exporters.html.page import render_page
from exporters.html.sweep_page import sweep_page
from metrics.results import CAPACITY_FILE as CAPACITY_FILE
from metrics.results import CAPACITY_REPORT_FILE as CAPACITY_REPORT_FILE
from metrics.results import REPORT_FILE as POINT_REPORT
from metrics.results import SWEEP_FILE as SWEEP_FILE
from metrics.results import SWEEP_REPORT_FILE as SWEEP_REPORT_FILE
from metrics.results import Run, point_path, read_capacity_points, read_sweep, run_or_none, write_atomic
from metrics.results import point_labels as _labels
from metrics.results import read_document as read_document


def point_links(directory: Path, labels: Iterable[str], page: Path) -> dict[str, str]:
    """label → URL of DIR/points/<label>/report.html relative to where the page is written (those that exist)."""
    base = page.resolve().parent
    links = {}
    for label in labels:
        try:
            report = point_path(directory, label) / POINT_REPORT
        except ValueError:  # leads outside DIR/points: not one of its reports
            continue
        if report.is_file():
            links[label] = quote(Path(os.path.relpath(report.resolve(), base)).as_posix())
    return links


def point_run(directory: Path, labels: Iterable[str]) -> tuple[str | None, str | None]:
    """(model, workload) as the first point with a readable run.json says."""
    for label in labels:
        try:
            run = run_or_none(point_path(directory, label))
        except ValueError:
            continue
        if run is not None:
            model = run.get("model")
            return (str(model) if model else None), workload_text(Run.from_json(run))
    return None, None


def _label(directory: Path) -> str:
    return directory.resolve().name or str(directory)


def write_sweep_report(sweep_dir: Path, *, path: Path | None = None) -> Path:
    """Write the page of the sweep in `sweep_dir` to `path` (default DIR/sweep.html); return where.
    ValueError: no readable sweep.json; OSError: writing failed; RuntimeError: plotly is not installed."""
    doc = read_sweep(sweep_dir)
    out = path if path is not None else sweep_dir / SWEEP_REPORT_FILE
    model, workload = point_run(sweep_dir, _labels(doc.rows(), finished=True))
    page = sweep_page(doc, _label(sweep_dir), reports=point_links(sweep_dir, _labels(doc.rows()), out), model=model,
                      workload=workload)
    write_atomic(out, render_page(page, library_src=_shared_src(sweep_dir, out)).encode("utf-8"))
    return out


def _shared_src(directory: Path, page: Path) -> str | None:
    """The directory's shared plotting library (written if missing), as a URL relative to `page`; None (the
    page embeds it) for a page written outside the directory."""
    if page.resolve().parent != directory.resolve():
        return None
    return library_src(shared_library(directory), page)


def write_capacity_report(directory: Path, verdict_line: str, *, path: Path | None = None) -> Path:
    """Write the page of the capacity search in `directory` to `path` (default DIR/capacity.html); return
    where. `verdict_line`: the line `goodput capacity` prints for it. Errors as write_sweep_report."""
    doc = read_capacity_points(directory)
    out = path if path is not None else directory / CAPACITY_REPORT_FILE
    model, workload = point_run(directory, _labels(doc.points, finished=True))
    page = capacity_page(doc, _label(directory), verdict_line, reports=point_links(directory, _labels(doc.points), out),
                         model=model, workload=workload)
    write_atomic(out, render_page(page, library_src=_shared_src(directory, out)).encode("utf-8"))
    return out
