"""The results contract: the layout of goodput's result directories and the one reader and writer of each
result document, below both the load generator (which writes them) and the exporters (which read them).

- `layout`: every file name of a run, sweep or capacity directory;
- `versions`: each document's schema version and the check of a version read back;
- `documents`: the readers and writers of run.json, summary.json, sweep.json and capacity.json;
- `sweep_view`, `capacity_view`, `row_view`, `shared_view`: typed, frozen views of sweep.json and
  capacity.json (`from_json` parses once, `to_json` writes goodput's JSON back), read with `read_sweep`
  and `read_capacity`, written with `write_sweep` and `write_capacity`;
- `points`: where a sweep's or capacity search's point lives (DIR/points/<label>/), labels checked;
- `run_write`: the typed writer of run.json (`RunFile`: its start, workers and end), `write_run_file`;
- `atomic`: the atomic write (temporary file, then rename) every result file goes through;
- `summary_view`: the typed, frozen view of summary.json (its sections in `summary_*.py`), imported on
  first use (`SummaryView`, `read_summary_view` and the section types are names of this package all the
  same): building ~30 views costs a start-up what the first request should not wait for;
- `frozen_view`: `@frozen`, the decorator every view is declared with (a frozen, slotted, typed value class made
  without compiling code per class, as a dataclass does), and `replace`, the view with some fields changed.

Light: the standard library only, so a run can import it before its first request.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from metrics.results.atomic import create_temp, named_error, write_atomic, write_json
from metrics.results.documents import (
    is_capacity_dir,
    load_summary,
    load_sweep,
    point_labels,
    read_capacity,
    read_capacity_points,
    read_document,
    read_run,
    read_run_view,
    read_summary,
    read_sweep,
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
    ENGINE_STEPS_FILE,
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

if TYPE_CHECKING:  # the views load on first use (__getattr__ below): a run imports this package early
    from metrics.results.capacity_view import CapacityFigure, CapacityView, ProbedRate
    from metrics.results.cost_json import CapacityCostJson, CostJson, CostTargetJson
    from metrics.results.frozen_view import frozen, replace
    from metrics.results.predict_compare_view import (
        CapacityComparison,
        MeasuredCapacity,
        MeasuredComparison,
        MeasuredFigures,
        PointComparison,
        PredictedBand,
    )
    from metrics.results.predict_view import (
        ParamFit,
        PredictedCapacity,
        PredictedPoint,
        PredictView,
        ServerModelInfo,
    )
    from metrics.results.row_view import COLUMNS, LATENCY_COLUMNS, PERCENTILES, PointRow
    from metrics.results.run_view import PlannedLoad, RunDocument
    from metrics.results.run_write import RunEnd, RunFile, RunResolved, RunStart, write_run_file
    from metrics.results.shared_view import Ceiling, ServerInfo
    from metrics.results.summary_document import SummaryDocument
    from metrics.results.summary_goodput import BurstDelivered, Goodput, Reasoning, ToolCalls, slo_bounds
    from metrics.results.summary_gpu import Gpu, GpuFigures, GpuRow, GpuSource, GpuTotal, MeanMax
    from metrics.results.summary_parse import (
        Json,
        JsonObject,
        bool_or_none,
        finite_or_none,
        float_or_none,
        int_or_none,
        is_int,
        json_object,
        number_or_none,
        object_or_empty,
        text_or_none,
    )
    from metrics.results.summary_requests import FailureMessage, Requests, Throughput
    from metrics.results.summary_run import Run, Saturation, Window
    from metrics.results.summary_server import Gauge, Histogram, Quantile, Server, ServerPrometheus
    from metrics.results.summary_sessions import Sessions, Stalls
    from metrics.results.summary_stats import STAT_KEYS, Stats
    from metrics.results.summary_tokens import PrefixCacheShare, PromptAccuracy, Spread, Tokens
    from metrics.results.summary_view import Bucket, Roofline, RooflineRow, SummaryView, read_summary_view
    from metrics.results.sweep_view import PointKind, PointPlan, SweepLength, SweepMode, SweepPoint, SweepView
from metrics.results.versions import (
    CAPACITY_SCHEMA_VERSION,
    RUN_SCHEMA_VERSION,
    SUMMARY_SCHEMA_VERSION,
    SWEEP_SCHEMA_VERSION,
    check_not_newer,
)

__all__ = [
    "CAPACITY_FILE",
    "CAPACITY_REPORT_FILE",
    "CAPACITY_SCHEMA_VERSION",
    "COLUMNS",
    "ENGINE_STEPS_FILE",
    "GPU_FILE",
    "LATENCY_COLUMNS",
    "PERCENTILES",
    "POINTS_DIR",
    "POINTS_RESULT_FILES",
    "RECORDS_FILE",
    "RECORDS_PARQUET_FILE",
    "RECORDS_STATUS_FILE",
    "REPORT_FILE",
    "RUN_FILE",
    "RUN_FILES",
    "RUN_SCHEMA_VERSION",
    "SERVER_SECTION_FILE",
    "SERVER_SERIES_FILE",
    "STAT_KEYS",
    "SUMMARY_CSV_FILE",
    "SUMMARY_FILE",
    "SUMMARY_SCHEMA_VERSION",
    "SWEEP_CSV_FILE",
    "SWEEP_FILE",
    "SWEEP_REPORT_FILE",
    "SWEEP_SCHEMA_VERSION",
    "TEXTFILE",
    "Bucket",
    "BurstDelivered",
    "CapacityComparison",
    "CapacityCostJson",
    "CapacityFigure",
    "CapacityView",
    "Ceiling",
    "CostJson",
    "CostTargetJson",
    "FailureMessage",
    "Gauge",
    "Goodput",
    "Gpu",
    "GpuFigures",
    "GpuRow",
    "GpuSource",
    "GpuTotal",
    "Histogram",
    "Json",
    "JsonObject",
    "MeanMax",
    "MeasuredCapacity",
    "MeasuredComparison",
    "MeasuredFigures",
    "ParamFit",
    "PlannedLoad",
    "PointComparison",
    "PointKind",
    "PointPlan",
    "PointRow",
    "PredictView",
    "PredictedBand",
    "PredictedCapacity",
    "PredictedPoint",
    "PrefixCacheShare",
    "ProbedRate",
    "PromptAccuracy",
    "Quantile",
    "Reasoning",
    "Requests",
    "Roofline",
    "RooflineRow",
    "Run",
    "RunDocument",
    "RunEnd",
    "RunFile",
    "RunResolved",
    "RunStart",
    "Saturation",
    "Server",
    "ServerInfo",
    "ServerModelInfo",
    "ServerPrometheus",
    "Sessions",
    "Spread",
    "Stalls",
    "Stats",
    "SummaryDocument",
    "SummaryView",
    "SweepLength",
    "SweepMode",
    "SweepPoint",
    "SweepView",
    "Throughput",
    "Tokens",
    "ToolCalls",
    "Window",
    "bool_or_none",
    "check_label",
    "check_labels",
    "check_not_newer",
    "create_temp",
    "finite_or_none",
    "float_or_none",
    "frozen",
    "int_or_none",
    "is_capacity_dir",
    "is_int",
    "json_object",
    "load_summary",
    "load_sweep",
    "named_error",
    "number_or_none",
    "object_or_empty",
    "point_labels",
    "point_path",
    "read_capacity",
    "read_capacity_points",
    "read_document",
    "read_run",
    "read_run_view",
    "read_summary",
    "read_summary_view",
    "read_sweep",
    "replace",
    "run_or_none",
    "slo_bounds",
    "summary_or_none",
    "text_or_none",
    "write_atomic",
    "write_capacity",
    "write_json",
    "write_run",
    "write_run_file",
    "write_summary",
    "write_sweep",
]

# The views' names, each module loaded when one of its names is first asked for.
_VIEWS = {
    **dict.fromkeys(("BurstDelivered", "Goodput", "Reasoning", "ToolCalls", "slo_bounds"), "summary_goodput"),
    **dict.fromkeys(("Gpu", "GpuFigures", "GpuRow", "GpuSource", "GpuTotal", "MeanMax"), "summary_gpu"),
    **dict.fromkeys(("FailureMessage", "Requests", "Throughput"), "summary_requests"),
    **dict.fromkeys(("Run", "Saturation", "Window"), "summary_run"),
    **dict.fromkeys(("Sessions", "Stalls"), "summary_sessions"),
    **dict.fromkeys(("SummaryDocument",), "summary_document"),
    **dict.fromkeys(("Json", "JsonObject", "bool_or_none", "finite_or_none", "float_or_none", "int_or_none", "is_int",
                     "json_object", "number_or_none", "object_or_empty", "text_or_none"), "summary_parse"),
    **dict.fromkeys(("Gauge", "Histogram", "Quantile", "Server", "ServerPrometheus"), "summary_server"),
    **dict.fromkeys(("STAT_KEYS", "Stats"), "summary_stats"),
    **dict.fromkeys(("PrefixCacheShare", "PromptAccuracy", "Spread", "Tokens"), "summary_tokens"),
    **dict.fromkeys(("Bucket", "Roofline", "RooflineRow", "SummaryView", "read_summary_view"), "summary_view"),
    **dict.fromkeys(("CapacityCostJson", "CostJson", "CostTargetJson"), "cost_json"),
    **dict.fromkeys(("frozen", "replace"), "frozen_view"),
    **dict.fromkeys(("RunEnd", "RunFile", "RunResolved", "RunStart", "write_run_file"), "run_write"),
    "CapacityFigure": "capacity_view",
    "CapacityView": "capacity_view",
    "ProbedRate": "capacity_view",
    "CapacityComparison": "predict_compare_view",
    "MeasuredCapacity": "predict_compare_view",
    "MeasuredComparison": "predict_compare_view",
    "MeasuredFigures": "predict_compare_view",
    "PointComparison": "predict_compare_view",
    "PredictedBand": "predict_compare_view",
    "ParamFit": "predict_view",
    "PredictedCapacity": "predict_view",
    "PredictedPoint": "predict_view",
    "PredictView": "predict_view",
    "ServerModelInfo": "predict_view",
    "COLUMNS": "row_view",
    "LATENCY_COLUMNS": "row_view",
    "PERCENTILES": "row_view",
    "PointRow": "row_view",
    "PlannedLoad": "run_view",
    "RunDocument": "run_view",
    "Ceiling": "shared_view",
    "ServerInfo": "shared_view",
    "PointKind": "sweep_view",
    "PointPlan": "sweep_view",
    "SweepLength": "sweep_view",
    "SweepMode": "sweep_view",
    "SweepPoint": "sweep_view",
    "SweepView": "sweep_view",
}


def __getattr__(name: str) -> object:
    """A view's name, its module imported on first use."""
    module = _VIEWS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"metrics.results.{module}"), name)
    globals()[name] = value
    return value
