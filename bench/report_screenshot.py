"""The README's screenshot of an HTML report, taken by the browser code of the report's tests.

    .venv/bin/python bench/report_screenshot.py --output docs/images/report.png

Runs `goodput run` against the embedded reference server with a rising load (so latency grows during the
run), writes its report with `goodput report --html`, loads it in headless Chromium from its file URL
with networking off (tests/exporters/_browser.py), and saves the 'Over time' section's first charts.
`--run-dir DIR` screenshots an existing run instead.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.exporters._browser import browser_page, open_report  # noqa: E402  (the tests' own browser code)

GOODPUT = str(Path(sys.executable).with_name("goodput"))
RUN = ["--arrival", "ramp", "--rate", "2", "--rate-end", "40", "--duration", "20s", "--warmup", "2s",
       "--prompt-tokens", "uniform:64:512", "--output-tokens", "64", "--slo", "ttft=200ms", "--slo", "tpot=40ms",
       "--server-metrics-interval", "1s", "--quiet"]
CHARTS_SHOWN = 2  # TTFT and TPOT of each request over time


def screenshot(report: Path, out: Path, width: int) -> None:
    with browser_page(width=width, height=1000) as (page, loaded):
        open_report(page, loaded, report)
        if loaded.console_errors or loaded.page_errors or loaded.network:
            raise SystemExit(f"the report did not load cleanly: {loaded}")
        box = page.evaluate(f"""() => {{
            const section = document.getElementById("over-time").getBoundingClientRect();
            const last = document.querySelectorAll("#over-time figure.chart-block")[{CHARTS_SHOWN - 1}];
            const chart = last.querySelector("div.chart").getBoundingClientRect();
            return {{x: section.x, y: section.y + window.scrollY, width: section.width,
                     height: chart.bottom - section.top}};
        }}""")
        page.screenshot(path=str(out), clip=box, full_page=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--output", type=Path, default=ROOT / "docs" / "images" / "report.png")
    ap.add_argument("--run-dir", type=Path, help="screenshot this run's report instead of making a new run")
    ap.add_argument("--width", type=int, default=1100)
    args = ap.parse_args()
    args.output.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = args.run_dir or Path(tmp) / "run"
        if args.run_dir is None:
            subprocess.run([GOODPUT, "run", *RUN, "--output", str(run_dir)], check=True)
        subprocess.run([GOODPUT, "report", str(run_dir), "--quiet", "--html"], check=True)
        screenshot(run_dir / "report.html", args.output, args.width)
    print(f"{args.output}: {args.output.stat().st_size / 1e3:.0f} kB")


if __name__ == "__main__":
    main()
