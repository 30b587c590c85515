"""The HTML pages of a sweep (sweep.html) and a capacity search (capacity.html), exporters.html's pages
given what only loadgen knows (the capacity's verdict line). Called at the end of `goodput sweep` and
`goodput capacity` (unless --no-html) and by `goodput report DIR --html`."""

from __future__ import annotations

import sys
from pathlib import Path

from exporters.html import write_capacity_report, write_sweep_report
from loadgen.sweep.report import capacity_line
from metrics.results import CAPACITY_REPORT_FILE, SWEEP_REPORT_FILE, read_capacity


def write_sweep_html(sweep_dir: Path, *, path: Path | None = None) -> Path:
    """DIR/sweep.html (or `path`). ValueError: no readable sweep.json; OSError: writing failed;
    RuntimeError: the plotting library is not installed."""
    return write_sweep_report(sweep_dir, path=path)


def write_capacity_html(directory: Path, *, path: Path | None = None) -> Path:
    """DIR/capacity.html (or `path`), headed by the verdict line `goodput capacity` printed. Errors as above."""
    return write_capacity_report(directory, capacity_line(read_capacity(directory)), path=path)


def write_page_at_end(command: str, directory: Path, *, capacity: bool) -> tuple[Path | None, OSError | None]:
    """The page at the end of a sweep or a search: (where it was written, or None; the write error, if any).
    A missing plotting library or an unreadable result file is a warning on stderr: the results stand."""
    try:
        written = write_capacity_html(directory) if capacity else write_sweep_html(directory)
    except OSError as exc:
        return None, exc
    except (RuntimeError, ValueError) as exc:
        name = CAPACITY_REPORT_FILE if capacity else SWEEP_REPORT_FILE
        print(f"goodput {command}: warning: {name} not written: {exc}", file=sys.stderr)
        return None, None
    return written, None
