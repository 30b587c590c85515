"""Writing the pages of a sweep (DIR/sweep.html from sweep.json) and of a capacity search
(DIR/capacity.html from capacity.json), with relative links to each point's report.html where it has one.

The model and workload in the header are read from the first finished point's run.json: sweep.json and
capacity.json keep the run spec, where an embedded server's model is only resolved once it has started.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from exporters.files import write_atomic
from exporters.html.assets import library_src, shared_library
from exporters.html.capacity_page import capacity_page
from exporters.html.header import workload_text
from exporters.html.page import render_page
from exporters.html.sweep_page import sweep_page
from exporters.point_dirs import check_label, point_path

SWEEP_FILE = "sweep.json"
CAPACITY_FILE = "capacity.json"
SWEEP_REPORT_FILE = "sweep.html"
CAPACITY_REPORT_FILE = "capacity.html"
POINT_REPORT = "report.html"
RUN_FILE = "run.json"


def read_document(directory: Path, name: str, kind: str) -> dict[str, Any]:
    """sweep.json or capacity.json (ValueError, one line, when it is missing or is not one)."""
    path = directory / name
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ValueError(f"{path} is not valid JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("kind") != kind or not isinstance(data.get("points"), list):
        raise ValueError(f"{path} is not a {name} written by goodput {kind}")
    try:  # each label names a directory under points/: a name, never a path
        for p in data["points"]:
            if isinstance(p, dict) and isinstance(p.get("plan"), dict) and "label" in p["plan"]:
                check_label(p["plan"]["label"])
        for label in _labels(data):
            check_label(label)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    return data


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
            run = json.loads((point_path(directory, label) / RUN_FILE).read_text())
        except (OSError, ValueError):
            continue
        if isinstance(run, dict):
            model = run.get("model")
            return (str(model) if model else None), workload_text(run)
    return None, None


def _labels(doc: dict[str, Any], *, finished: bool = False) -> list[str]:
    """The points' labels (sweep.json nests each row under `row`; capacity.json lists the rows)."""
    out = []
    for p in doc.get("points") or []:
        row = p.get("row") if isinstance(p, dict) and isinstance(p.get("row"), dict) else p
        if isinstance(row, dict) and row.get("label") and (row.get("status") == "done" or not finished):
            out.append(str(row["label"]))
    return out


def _label(directory: Path) -> str:
    return directory.resolve().name or str(directory)


def write_sweep_report(sweep_dir: Path, *, path: Path | None = None) -> Path:
    """Write the page of the sweep in `sweep_dir` to `path` (default DIR/sweep.html); return where.
    ValueError: no readable sweep.json; OSError: writing failed; RuntimeError: plotly is not installed."""
    doc = read_document(sweep_dir, SWEEP_FILE, "sweep")
    out = path if path is not None else sweep_dir / SWEEP_REPORT_FILE
    model, workload = point_run(sweep_dir, _labels(doc, finished=True))
    page = sweep_page(doc, _label(sweep_dir), reports=point_links(sweep_dir, _labels(doc), out), model=model,
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
    doc = read_document(directory, CAPACITY_FILE, "capacity")
    out = path if path is not None else directory / CAPACITY_REPORT_FILE
    model, workload = point_run(directory, _labels(doc, finished=True))
    page = capacity_page(doc, _label(directory), verdict_line, reports=point_links(directory, _labels(doc), out),
                         model=model, workload=workload)
    write_atomic(out, render_page(page, library_src=_shared_src(directory, out)).encode("utf-8"))
    return out
