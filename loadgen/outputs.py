"""Turning records into every output of a run. `goodput run` and `goodput report` share this, so a report
rebuilt from `records.jsonl` is the same as the one the run wrote.

`run.json` is written when a run starts (settings, target, anchor wall time) and again when it ends;
`records.jsonl` grows as requests finish. Together they are enough to rebuild everything else.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from exporters.files import write_json, write_records_parquet, write_summary_csv
from loadgen.roofline_report import roofline_section
from metrics.frame import frame_from_jsonl
from metrics.frame_arrow import frame_from_table, read_records_table
from metrics.slo import parse_slo
from metrics.summary import SummaryConfig, summarize

RUN_FILE = "run.json"
RECORDS_FILE = "records.jsonl"


def summary_config(settings: dict[str, Any]) -> SummaryConfig:
    """The metric settings a run was made with (or defaults), as the metrics package wants them."""
    kwargs: dict[str, Any] = {"slo": parse_slo(list(settings.get("slo", [])))}
    for key in ("warmup_s", "cooldown_s", "schedule_end_s", "cache_full_ratio", "absent_cache_is_zero",
                "stall_threshold_s", "lag_threshold_s"):
        if settings.get(key) is not None:
            kwargs[key] = settings[key]
    for key in ("prompt_bucket_edges", "output_bucket_edges"):
        if settings.get(key):
            kwargs[key] = tuple(settings[key])
    return SummaryConfig(**kwargs)


def read_run(out_dir: Path) -> dict[str, Any]:
    path = out_dir / RUN_FILE
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    return data if isinstance(data, dict) else {}


def write_outputs(out_dir: Path, run: dict[str, Any]) -> dict[str, Any]:
    """Write summary.json, summary.csv and records.parquet from records.jsonl; return the summary.

    Always from the file (never from records held in memory), so `goodput report` rebuilds exactly
    what the run wrote.
    """
    import pyarrow as pa

    records = out_dir / RECORDS_FILE
    try:  # one parse (Arrow, every core) serves the frame and records.parquet
        table = read_records_table(records)
        frame = frame_from_table(table)
    except pa.ArrowException:  # lines Arrow cannot type consistently: the line-by-line reader copes
        table, frame = None, frame_from_jsonl(records)
    write_records_parquet(out_dir / "records.parquet", records, table)
    del table  # before summarising, which needs the memory more
    summary: dict[str, Any] = summarize(frame, summary_config(run.get("settings", {})), dict(run))
    spec = run.get("settings", {}).get("roofline")
    if spec:
        summary["roofline"] = roofline_section(summary, spec)
    write_json(out_dir / "summary.json", summary)
    write_summary_csv(out_dir / "summary.csv", summary)
    return summary
