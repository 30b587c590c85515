"""Predicting a server from measurements: a fitted step-time model (`step_model`), fitted from runs
(`calibrate`), driving the reference engine's own scheduler in virtual time (`virtual`, `predict`).

The names below are imported on first use (metrics.lazy_face).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics import lazy_names

if TYPE_CHECKING:
    from loadgen.predict.bounds import roofline_bounds
    from loadgen.predict.calibrate import IdentifyError, build_model, fit_best, prefill_unidentified
    from loadgen.predict.compare import compare as compare_measured
    from loadgen.predict.compare import measured_rates
    from loadgen.predict.engine_steps import read_engine_steps
    from loadgen.predict.expand import split_chunks
    from loadgen.predict.fit_json import FitJson, RunFit, ServerCheck, ServerRows
    from loadgen.predict.measured import read_measured, slo_given
    from loadgen.predict.parallel import default_jobs, points_at
    from loadgen.predict.predict import Fleet, capacity_band, format_table, monotone_note, point
    from loadgen.predict.prefill import replay
    from loadgen.predict.report import measured_lines, prediction_context
    from loadgen.predict.requests import Requests, RequestSource
    from loadgen.predict.robust import left_out_prefill, trim
    from loadgen.predict.server_check import check_line, prefill_aggregate
    from loadgen.predict.server_check import server_check as check_against_server
    from loadgen.predict.server_run import read_server_run, resolve_limits, server_limits
    from loadgen.predict.step_model import PARAMS, load_model
    from loadgen.predict.steps import Step, no_steps_message, reconstruct

__all__ = [
    "PARAMS",
    "FitJson",
    "Fleet",
    "IdentifyError",
    "RequestSource",
    "Requests",
    "RunFit",
    "ServerCheck",
    "ServerRows",
    "Step",
    "build_model",
    "capacity_band",
    "check_against_server",
    "check_line",
    "compare_measured",
    "default_jobs",
    "fit_best",
    "format_table",
    "left_out_prefill",
    "load_model",
    "measured_lines",
    "measured_rates",
    "monotone_note",
    "no_steps_message",
    "point",
    "points_at",
    "prediction_context",
    "prefill_aggregate",
    "prefill_unidentified",
    "read_engine_steps",
    "read_measured",
    "read_server_run",
    "reconstruct",
    "replay",
    "resolve_limits",
    "roofline_bounds",
    "server_limits",
    "slo_given",
    "split_chunks",
    "trim",
]

__getattr__ = lazy_names(__name__, {
    "roofline_bounds": "bounds",
    "IdentifyError": "calibrate", "build_model": "calibrate", "fit_best": "calibrate",
    "prefill_unidentified": "calibrate",
    "compare_measured": "compare:compare", "measured_rates": "compare",
    "split_chunks": "expand",
    "FitJson": "fit_json", "RunFit": "fit_json", "ServerCheck": "fit_json", "ServerRows": "fit_json",
    "read_measured": "measured", "slo_given": "measured",
    "Fleet": "predict", "capacity_band": "predict", "format_table": "predict", "monotone_note": "predict",
    "point": "predict",
    "default_jobs": "parallel", "points_at": "parallel",
    "replay": "prefill",
    "measured_lines": "report", "prediction_context": "report",
    "RequestSource": "requests", "Requests": "requests",
    "trim": "robust", "left_out_prefill": "robust",
    "check_against_server": "server_check:server_check", "check_line": "server_check",
    "prefill_aggregate": "server_check",
    "read_server_run": "server_run", "resolve_limits": "server_run", "server_limits": "server_run",
    "PARAMS": "step_model", "load_model": "step_model",
    "Step": "steps", "no_steps_message": "steps", "reconstruct": "steps", "read_engine_steps": "engine_steps",
})
