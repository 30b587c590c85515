"""The gate: thresholds (`thresholds`), their evaluation against a run (`evaluate`, over `run_samples`),
the gate's config file (`config`), and the comparison of runs (`compare`, `compare_rule`).

The names below are imported on first use (metrics.lazy_face).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics import lazy_names

if TYPE_CHECKING:
    from metrics.gate.compare import DEFAULT_STATS, Row, compare_runs, parse_stat
    from metrics.gate.compare_rule import (
        DEFAULT_MIN_CHANGE,
        DEFAULT_MIN_CHANGE_ABS_S,
        INCLUDES_ZERO,
        WITHIN_RUN_SPREAD,
    )
    from metrics.gate.config import (
        GateConfig,
        GateConfigError,
        load_gate_config,
        read_config_data,
        threshold_entries,
    )
    from metrics.gate.evaluate import RunView, Verdict, evaluate_one, failed, format_value
    from metrics.gate.evaluate import evaluate as evaluate_thresholds
    from metrics.gate.run_samples import RunSamples
    from metrics.gate.thresholds import Threshold, check_labels, parse_threshold

__all__ = [
    "DEFAULT_MIN_CHANGE",
    "DEFAULT_MIN_CHANGE_ABS_S",
    "DEFAULT_STATS",
    "INCLUDES_ZERO",
    "WITHIN_RUN_SPREAD",
    "GateConfig",
    "GateConfigError",
    "Row",
    "RunSamples",
    "RunView",
    "Threshold",
    "Verdict",
    "check_labels",
    "compare_runs",
    "evaluate_one",
    "evaluate_thresholds",
    "failed",
    "format_value",
    "load_gate_config",
    "parse_stat",
    "parse_threshold",
    "read_config_data",
    "threshold_entries",
]

__getattr__ = lazy_names(__name__, {
    "DEFAULT_STATS": "compare", "Row": "compare", "compare_runs": "compare", "parse_stat": "compare",
    "DEFAULT_MIN_CHANGE": "compare_rule", "DEFAULT_MIN_CHANGE_ABS_S": "compare_rule",
    "INCLUDES_ZERO": "compare_rule", "WITHIN_RUN_SPREAD": "compare_rule",
    "GateConfig": "config", "GateConfigError": "config", "load_gate_config": "config",
    "read_config_data": "config", "threshold_entries": "config",
    "RunView": "evaluate", "Verdict": "evaluate", "evaluate_one": "evaluate",
    "evaluate_thresholds": "evaluate:evaluate", "failed": "evaluate", "format_value": "evaluate",
    "RunSamples": "run_samples",
    "Threshold": "thresholds", "check_labels": "thresholds", "parse_threshold": "thresholds",
})
