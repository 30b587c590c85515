"""The layout of goodput's result directories: every file name, once.

A run directory (`goodput run`, `goodput report`; each point of a sweep or capacity search):

    run.json                what the run was (spec, resolved values, how it ended)   documents.read_run
    records.jsonl           one record per request, appended as each ends           metrics.records
    records.status.json     the record writer's count of unwritten records           loadgen.dispatch.records_status
    summary.json            every metric of the run                                 documents.read_summary
    summary.csv             the latency blocks, one row per (bucket, metric)        exporters.files
    records.parquet         records.jsonl as columns                                exporters.files
    metrics.prom            the run's Prometheus families (textfile)                exporters.prometheus
    server_metrics.jsonl    server gauges scraped during the run                    loadgen.run.scrape
    server_prometheus.json  the server's /metrics section of summary.json           loadgen.run.prometheus
    gpu_metrics.json        GPU telemetry scraped during the run                    loadgen.run.gpu_scrape
    report.html             the HTML report                                         exporters.html

A sweep directory holds sweep.json, sweep.csv, sweep.html and points/<label>/ (a run directory per
point); a capacity search's holds capacity.json, capacity.html and points/<label>/.

Light on purpose (no imports): a run reads these names before its first request is sent.
"""

from __future__ import annotations

RUN_FILE = "run.json"
RECORDS_FILE = "records.jsonl"
RECORDS_STATUS_FILE = "records.status.json"
SUMMARY_FILE = "summary.json"
SUMMARY_CSV_FILE = "summary.csv"
RECORDS_PARQUET_FILE = "records.parquet"
TEXTFILE = "metrics.prom"
SERVER_SERIES_FILE = "server_metrics.jsonl"
SERVER_SECTION_FILE = "server_prometheus.json"
ENGINE_STEPS_FILE = "engine_steps.jsonl"  # the reference server's engine steps (loadgen.run.engine_steps)
GPU_FILE = "gpu_metrics.json"
REPORT_FILE = "report.html"

SWEEP_FILE = "sweep.json"
SWEEP_CSV_FILE = "sweep.csv"
SWEEP_REPORT_FILE = "sweep.html"
CAPACITY_FILE = "capacity.json"
CAPACITY_REPORT_FILE = "capacity.html"
POINTS_DIR = "points"  # DIR/points/<label>/: one run directory per point (metrics.results.points)

# What `--overwrite` removes from a run directory (and what makes a directory hold a run).
RUN_FILES = (RECORDS_FILE, RUN_FILE, SUMMARY_FILE, SUMMARY_CSV_FILE, RECORDS_PARQUET_FILE, TEXTFILE,
             SERVER_SERIES_FILE, SERVER_SECTION_FILE, REPORT_FILE, RECORDS_STATUS_FILE, ENGINE_STEPS_FILE)
# The result files of a sweep or capacity directory (besides its points).
POINTS_RESULT_FILES = (SWEEP_FILE, SWEEP_CSV_FILE, CAPACITY_FILE)
