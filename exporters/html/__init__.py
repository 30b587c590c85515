"""Self-contained HTML reports with plots: one file that opens from disk with no network.

- `write_report(run_dir, config)`: a run's report.html (header and flags, tables, SLO and thresholds,
  distributions, the run over time, the server side, roofline floors); loadgen.run.html_report.write_run_report
  calls it with the settings read from the run's run.json.
- `write_compare_report(path, baselines, candidate, rows)`: several runs overlaid.
- `write_sweep_report(sweep_dir)` and `write_capacity_report(directory, verdict_line)`: a sweep's
  sweep.html and a capacity search's capacity.html, from sweep.json / capacity.json, linking to each
  point's report.html.
- `write_predict_report(doc, path)`: `goodput predict`'s predict.html from predict.json, with the points of
  measured runs, sweeps and capacity searches overlaid (`predict_page`, `predict_charts`).

Layout: `page` (page model and HTML), `figures` (Plotly figure JSON, its types in `plotly_json`), one module
per kind of data (`cdf`, `timeline`, `server_data`, `downsample`), one per group of charts (`dist_charts`, `time_charts`,
`server_charts`), `tables`, `header`, and one per page (`run_page`, `compare_page`, `sweep_page`,
`capacity_page`, with their data in `sweep_data` / `capacity_data` and their charts in `sweep_charts` /
`capacity_charts` / `load_charts`); a new page is a new page module built from the same parts.
"""

from __future__ import annotations

from exporters.html.capacity_data import capacity_verdict
from exporters.html.header import slo_text
from exporters.html.predict_page import write_predict_report
from exporters.html.run_data import read_server_series, run_data
from exporters.html.sweep_data import done, sweep_capacity, sweep_rows
from exporters.html.sweep_write import (
    CAPACITY_REPORT_FILE,
    SWEEP_REPORT_FILE,
    write_capacity_report,
    write_sweep_report,
)
from exporters.html.write import (
    REPORT_FILE,
    load_run_data,
    run_gate_baseline,
    run_label,
    summary_run,
    write_compare_report,
    write_report,
)

__all__ = [
    "CAPACITY_REPORT_FILE", "REPORT_FILE", "SWEEP_REPORT_FILE", "capacity_verdict", "done", "load_run_data",
    "read_server_series", "run_data", "run_gate_baseline", "run_label", "slo_text", "summary_run",
    "sweep_capacity", "sweep_rows", "write_capacity_report", "write_compare_report", "write_predict_report",
    "write_report", "write_sweep_report",
]
