"""Self-contained HTML reports with plots: one file that opens from disk with no network.

- `write_report(run_dir, config)`: a run's report.html (header and flags, tables, SLO and thresholds,
  distributions, the run over time, the server side, roofline floors); loadgen.run.html_report.write_run_report
  calls it with the settings read from the run's run.json.
- `write_compare_report(path, baselines, candidate, rows)`: several runs overlaid.

Layout: `page` (page model and HTML), `figures` (Plotly figure JSON), one module per kind of data
(`cdf`, `timeline`, `server_data`, `downsample`), one per group of charts (`dist_charts`, `time_charts`,
`server_charts`), `tables`, `header`, and one per page (`run_page`, `compare_page`); a new page (a sweep)
is a new page module built from the same parts.
"""

from __future__ import annotations

from exporters.html.write import REPORT_FILE, load_run_data, write_compare_report, write_report

__all__ = ["REPORT_FILE", "load_run_data", "write_compare_report", "write_report"]
