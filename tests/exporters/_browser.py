"""Loading a report in a real browser: Debian's headless Chromium driven by Playwright, networking off.

`playwright` (PyPI) only drives the browser; it never downloads one here (`executable_path` is the system
Chromium). Used by tests/exporters/test_html_browser.py and by bench/report_screenshot.py, which makes the
README's screenshot with the same code.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM_NAMES = ("chromium", "chromium-browser")
# As root Chromium needs --no-sandbox; the rest keep it from reaching for the network or a GPU.
CHROMIUM_ARGS = ("--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync", "--disable-quic", "--disable-dev-shm-usage")
DRAW_TIMEOUT_MS = 120_000  # a busy 2-core machine draws ~40 charts slowly

# Per chart container: whether plotly.js finished it, and how many marks it drew (non-empty line paths,
# scatter points, bars).
CHART_MARKS_JS = """() => Array.from(document.querySelectorAll("div.chart")).map((el) => ({
  spec: el.dataset.spec,
  title: el.getAttribute("aria-label"),
  drawn: el.dataset.drawn === "1",
  marks: Array.from(el.querySelectorAll(
    ".scatterlayer path.js-line, .scatterlayer path.point, .barlayer path"
  )).filter((p) => (p.getAttribute("d") || "").length > 2).length,
}))"""


def chromium_path() -> str | None:
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class Loaded:
    """What loading a page showed: console messages by type, page errors, requests that tried to leave the disk."""

    console: list[tuple[str, str]] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    network: list[str] = field(default_factory=list)
    charts: list[dict[str, Any]] = field(default_factory=list)

    @property
    def console_errors(self) -> list[str]:
        return [text for kind, text in self.console if kind == "error"]


@contextmanager
def browser_page(width: int = 1280, height: int = 900) -> Iterator[tuple[Any, Loaded]]:
    """A fresh headless Chromium page (its own empty profile), offline, every non-file request aborted."""
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    if path is None:
        raise RuntimeError("chromium is not installed")
    loaded = Loaded()
    with tempfile.TemporaryDirectory(prefix="goodput-chromium-") as profile, sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=path, headless=True, args=list(CHROMIUM_ARGS), offline=True,
            viewport={"width": width, "height": height})
        try:
            def route(r: Any) -> None:
                if r.request.url.startswith("file:"):
                    r.continue_()
                else:
                    loaded.network.append(r.request.url)
                    r.abort()

            context.route("**/*", route)
            page = context.new_page()
            page.on("console", lambda m: loaded.console.append((m.type, m.text)))
            page.on("pageerror", lambda e: loaded.page_errors.append(str(e)))
            yield page, loaded
        finally:
            context.close()


def open_report(page: Any, loaded: Loaded, report: Path) -> None:
    """Load a report from its file URL and wait until plotly.js has finished (or failed) every chart."""
    page.goto(report.resolve().as_uri())
    page.wait_for_function(
        "() => window.goodputReport && window.goodputReport.drawn + window.goodputReport.failed.length"
        " === window.goodputReport.charts", timeout=DRAW_TIMEOUT_MS)
    loaded.charts = page.evaluate(CHART_MARKS_JS)
