"""Many runs as one measurement: `goodput sweep` (a series of load points) and `goodput capacity` (the
search for the highest rate that still meets the SLO). Each point is an ordinary run in `DIR/points/`;
this package plans the points, runs them against one server, and writes what they add up to.

The names below are imported on first use (metrics.lazy_face).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics import lazy_names

if TYPE_CHECKING:
    from loadgen.sweep.capacity import DEFAULT_POINT_DURATION_S, CapacityJob, run_capacity, with_floor
    from loadgen.sweep.directory import prepare_sweep_dir
    from loadgen.sweep.document import SweepState, read_sweep
    from loadgen.sweep.exact_rate import exact_rate_offsets
    from loadgen.sweep.gate import capacity_gate_plan, gate_capacity_dir
    from loadgen.sweep.html_pages import write_capacity_html, write_sweep_html
    from loadgen.sweep.json_read import as_float, part, section, whole
    from loadgen.sweep.points import (
        PointLength,
        PointPlan,
        plan_point,
        point_gate,
        point_length,
        point_load,
        point_spec,
    )
    from loadgen.sweep.report import capacity_line, points_table
    from loadgen.sweep.rows import point_row
    from loadgen.sweep.sweep import DEFAULT_CEILING_CONCURRENCY, parse_list, plan_sweep, run_sweep, sweep_mode

__all__ = [
    "DEFAULT_CEILING_CONCURRENCY",
    "DEFAULT_POINT_DURATION_S",
    "CapacityJob",
    "PointLength",
    "PointPlan",
    "SweepState",
    "as_float",
    "capacity_gate_plan",
    "capacity_line",
    "exact_rate_offsets",
    "gate_capacity_dir",
    "parse_list",
    "part",
    "plan_point",
    "plan_sweep",
    "point_gate",
    "point_length",
    "point_load",
    "point_row",
    "point_spec",
    "points_table",
    "prepare_sweep_dir",
    "read_sweep",
    "run_capacity",
    "run_sweep",
    "section",
    "sweep_mode",
    "whole",
    "with_floor",
    "write_capacity_html",
    "write_sweep_html",
]

__getattr__ = lazy_names(__name__, {
    "CapacityJob": "capacity", "DEFAULT_POINT_DURATION_S": "capacity", "run_capacity": "capacity",
    "with_floor": "capacity",
    "prepare_sweep_dir": "directory",
    "SweepState": "document", "read_sweep": "document",
    "capacity_gate_plan": "gate", "gate_capacity_dir": "gate",
    "write_capacity_html": "html_pages", "write_sweep_html": "html_pages",
    "as_float": "json_read", "part": "json_read",
    "section": "json_read", "whole": "json_read",
    "exact_rate_offsets": "exact_rate",
    "PointLength": "points", "PointPlan": "points", "plan_point": "points", "point_gate": "points",
    "point_length": "points", "point_load": "points", "point_spec": "points",
    "capacity_line": "report", "points_table": "report",
    "point_row": "rows",
    "DEFAULT_CEILING_CONCURRENCY": "sweep", "parse_list": "sweep", "plan_sweep": "sweep",
    "run_sweep": "sweep", "sweep_mode": "sweep",
})
