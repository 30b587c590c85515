"""Everything goodput writes for people and other tools from a run's results: the console table and its
notes (`console`), summary.csv and records.parquet (`files`), JUnit XML (`junit`), Markdown for CI comments
(`markdown`); the Prometheus exposition (`exporters.prometheus`), Grafana dashboards (`exporters.grafana`) and
HTML reports (`exporters.html`) have their own folders.

The names below are imported on first use (metrics.lazy_face).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics import lazy_names

if TYPE_CHECKING:
    from exporters.console import format_summary, render_table
    from exporters.failure_notes import all_failed_alike, failed_alike
    from exporters.files import write_records_parquet, write_summary_csv
    from exporters.junit import write_junit
    from exporters.markdown import (
        change_cells,
        compare_markdown,
        compare_rule_text,
        gate_markdown,
        write_markdown,
    )

__all__ = [
    "all_failed_alike",
    "change_cells",
    "compare_markdown",
    "compare_rule_text",
    "failed_alike",
    "format_summary",
    "gate_markdown",
    "render_table",
    "write_junit",
    "write_markdown",
    "write_records_parquet",
    "write_summary_csv",
]

__getattr__ = lazy_names(__name__, {
    "format_summary": "console", "render_table": "console",
    "all_failed_alike": "failure_notes", "failed_alike": "failure_notes",
    "write_records_parquet": "files", "write_summary_csv": "files",
    "write_junit": "junit",
    "change_cells": "markdown", "compare_markdown": "markdown", "compare_rule_text": "markdown",
    "gate_markdown": "markdown", "write_markdown": "markdown",
})
