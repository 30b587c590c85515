"""The results contract: the layout of goodput's result directories and the one reader and writer of each
result document, below both the load generator (which writes them) and the exporters (which read them).

- `layout`: every file name of a run, sweep or capacity directory;
- `versions`: each document's schema version and the check of a version read back;
- `documents`: the readers and writers of run.json, summary.json, sweep.json and capacity.json;
- `points`: where a sweep's or capacity search's point lives (DIR/points/<label>/), labels checked;
- `atomic`: the atomic write (temporary file, then rename) every result file goes through.

Light: the standard library only, so a run can import it before its first request.
"""

from __future__ import annotations

from metrics.results.atomic import create_temp, named_error, write_atomic, write_json
from metrics.results.documents import (
    is_capacity_dir,
    load_summary,
    load_sweep,
    point_labels,
    read_capacity,
    read_document,
    read_run,
    read_summary,
    run_or_none,
    summary_or_none,
    write_capacity,
    write_run,
    write_summary,
    write_sweep,
)
from metrics.results.layout import (
    CAPACITY_FILE,
    CAPACITY_REPORT_FILE,
    GPU_FILE,
    POINTS_DIR,
    POINTS_RESULT_FILES,
    RECORDS_FILE,
    RECORDS_PARQUET_FILE,
    RECORDS_STATUS_FILE,
    REPORT_FILE,
    RUN_FILE,
    RUN_FILES,
    SERVER_SECTION_FILE,
    SERVER_SERIES_FILE,
    SUMMARY_CSV_FILE,
    SUMMARY_FILE,
    SWEEP_CSV_FILE,
    SWEEP_FILE,
    SWEEP_REPORT_FILE,
    TEXTFILE,
)
from metrics.results.points import check_label, check_labels, point_path
from metrics.results.versions import (
    CAPACITY_SCHEMA_VERSION,
    RUN_SCHEMA_VERSION,
    SUMMARY_SCHEMA_VERSION,
    SWEEP_SCHEMA_VERSION,
    check_not_newer,
)

__all__ = [
    "CAPACITY_FILE", "CAPACITY_REPORT_FILE", "CAPACITY_SCHEMA_VERSION", "GPU_FILE", "POINTS_DIR",
    "POINTS_RESULT_FILES", "RECORDS_FILE", "RECORDS_PARQUET_FILE", "RECORDS_STATUS_FILE", "REPORT_FILE",
    "RUN_FILE", "RUN_FILES", "RUN_SCHEMA_VERSION", "SERVER_SECTION_FILE", "SERVER_SERIES_FILE",
    "SUMMARY_CSV_FILE", "SUMMARY_FILE", "SUMMARY_SCHEMA_VERSION", "SWEEP_CSV_FILE", "SWEEP_FILE",
    "SWEEP_REPORT_FILE", "SWEEP_SCHEMA_VERSION", "TEXTFILE", "check_label", "check_labels", "check_not_newer",
    "create_temp", "is_capacity_dir", "load_summary", "load_sweep", "named_error", "point_labels", "point_path",
    "read_capacity",
    "read_document", "read_run", "read_summary", "run_or_none", "summary_or_none", "write_atomic",
    "write_capacity", "write_json", "write_run", "write_summary", "write_sweep",
]
