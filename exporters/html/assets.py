"""The plotting library embedded in every report: plotly.js, as the `plotly` Python package ships it.

The whole minified library goes inline into each page, so a report opens from disk with no network, and
the figures are plain JSON (`{"data": [...], "layout": {...}}`) built by this package without Plotly's
Python figure API. plotly.min.js is about 4.8 MB: most of a report's size; the data is kept small by the
point budgets of exporters.html.downsample.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

PLOTLY_PACKAGE = "plotly"
PLOTLY_JS = "package_data/plotly.min.js"


@cache
def plotly_js() -> str:
    """The minified plotly.js source (RuntimeError naming the missing package when it is not installed)."""
    try:
        return (resources.files(PLOTLY_PACKAGE) / PLOTLY_JS).read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise RuntimeError(f"the HTML report needs the '{PLOTLY_PACKAGE}' package (pip install plotly): {exc}") from None


@cache
def plotly_js_version() -> str:
    """plotly.js's version, from the banner at the top of the file ('unknown' if it has none)."""
    head = plotly_js()[:200]
    marker = "plotly.js v"
    at = head.find(marker)
    if at < 0:
        return "unknown"
    return head[at + len(marker):].split(None, 1)[0]
