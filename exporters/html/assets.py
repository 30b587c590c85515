"""The plotting library of every report: plotly.js's *basic* build (scatter, bar and pie traces with every
core component: legends, hover, zoom and pan, shapes, update menus, error bars, the mode bar).

The reports draw only scatter and bar traces, so the basic build draws every chart the full bundle did,
at a quarter of its size (1.2 MB instead of 4.8 MB). It is vendored unchanged from npm's
`plotly.js-basic-dist-min` (the same plotly.js version as the `plotly` Python package's full bundle;
MIT licence beside it in vendor/), because the Python package ships only the full bundle.

A run's page embeds the library inline, so report.html opens from disk with no network. The points of a
sweep or capacity search share one copy, DIR/plotly-basic.min.js, which their pages load by a relative
path (`shared_library`): still offline, and one copy instead of one per point.
"""

from __future__ import annotations

import os
from functools import cache
from importlib import resources
from pathlib import Path
from urllib.parse import quote

from metrics.results import POINTS_DIR, write_atomic

LIBRARY_PACKAGE = "exporters.html"
LIBRARY_RESOURCE = "vendor/plotly-basic.min.js"
LIBRARY_FILE = "plotly-basic.min.js"  # the shared copy in a sweep or capacity directory


@cache
def plotly_js() -> str:
    """The minified plotly.js source (RuntimeError when the installation lost it)."""
    try:
        return (resources.files(LIBRARY_PACKAGE) / LIBRARY_RESOURCE).read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise RuntimeError(f"the HTML report's plotting library is missing from this installation: {exc}") from None


@cache
def plotly_js_version() -> str:
    """plotly.js's version, from the banner at the top of the file ('unknown' if it has none)."""
    head = plotly_js()[:200]
    at = head.find(" v", head.find("plotly.js"))
    if at < 0:
        return "unknown"
    return head[at + 2:].split(None, 1)[0]


def results_dir(run_dir: Path) -> Path | None:
    """The sweep or capacity directory a run directory is a point of (DIR/points/<label>/), else None."""
    parent = run_dir.resolve().parent
    return parent.parent if parent.name == POINTS_DIR else None


def shared_library(directory: Path) -> Path:
    """DIR/plotly-basic.min.js, written (atomically) unless the same file is already there; OSError when it
    cannot be written."""
    path = directory / LIBRARY_FILE
    source = plotly_js().encode("utf-8")
    try:
        if path.stat().st_size == len(source) and path.read_bytes() == source:
            return path
    except OSError:
        pass
    write_atomic(path, source)
    return path


def library_src(library: Path, page: Path) -> str:
    """The URL of `library` relative to the folder of `page`."""
    return quote(Path(os.path.relpath(library.resolve(), page.resolve().parent)).as_posix())
