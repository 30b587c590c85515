"""What each request of a run asks and when it leaves: the workload sources (`sources`, `build`), prompt
and output lengths (`lengths`), conversations and agent loops (`sessions`, `agent`), traces (`traces`,
`trace_workload`), the arrival process and the schedule (`arrivals`, `schedule`), and the token counters
that size prompts (`counters`, `sizing`).

The names below are imported on first use (metrics.lazy_face).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics import lazy_names

if TYPE_CHECKING:
    from loadgen.workload.agent import TOOL_TURN_TAGS, AgentLoop, assistant_turn
    from loadgen.workload.arrivals import Arrival, gamma_gaps, parse_arrival
    from loadgen.workload.bounds import (
        MAX_BODY_BYTES,
        MAX_CONCURRENCY,
        MAX_CONNECTIONS,
        MAX_HORIZON_S,
        MAX_PREFIX_GROUPS,
        MAX_PREFIX_TOTAL_TOKENS,
        MAX_REQUESTS,
        MAX_TOKENS,
        MAX_TURNS,
        MAX_WORKERS,
        check_count,
    )
    from loadgen.workload.build import AnyWorkload, build_workload, is_sessions
    from loadgen.workload.cancel import check_cancel_spec
    from loadgen.workload.counters import make_counter
    from loadgen.workload.durations import format_duration, parse_duration_flag
    from loadgen.workload.lengths import (
        LengthDist,
        check_length,
        highest_length,
        parse_length,
        plain_number,
        shown_length,
    )
    from loadgen.workload.models import ModelMix, parse_models
    from loadgen.workload.prefix_cache import CachePredictionJSON, predict_hits
    from loadgen.workload.schedule import FloatArray, Schedule, run_schedule, trace_window
    from loadgen.workload.sessions import Session, Turn
    from loadgen.workload.sizing import RatioCounter, TableCounter, TemplateCost, fit_line
    from loadgen.workload.text import WORDS, Messages, TokenCounter, random_words
    from loadgen.workload.think import ThinkTime, parse_think_time
    from loadgen.workload.trace_shape import Lengths, TraceShape
    from loadgen.workload.trace_shape import trace_shape as describe_trace
    from loadgen.workload.trace_workload import TraceWorkload
    from loadgen.workload.traces import Trace, load_trace

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_CONCURRENCY",
    "MAX_CONNECTIONS",
    "MAX_HORIZON_S",
    "MAX_PREFIX_GROUPS",
    "MAX_PREFIX_TOTAL_TOKENS",
    "MAX_REQUESTS",
    "MAX_TOKENS",
    "MAX_TURNS",
    "MAX_WORKERS",
    "TOOL_TURN_TAGS",
    "WORDS",
    "AgentLoop",
    "AnyWorkload",
    "Arrival",
    "CachePredictionJSON",
    "FloatArray",
    "LengthDist",
    "Lengths",
    "Messages",
    "ModelMix",
    "RatioCounter",
    "Schedule",
    "Session",
    "TableCounter",
    "TemplateCost",
    "ThinkTime",
    "TokenCounter",
    "Trace",
    "TraceShape",
    "TraceWorkload",
    "Turn",
    "assistant_turn",
    "build_workload",
    "check_cancel_spec",
    "check_count",
    "check_length",
    "describe_trace",
    "fit_line",
    "format_duration",
    "gamma_gaps",
    "highest_length",
    "is_sessions",
    "load_trace",
    "make_counter",
    "parse_arrival",
    "parse_duration_flag",
    "parse_length",
    "parse_models",
    "parse_think_time",
    "plain_number",
    "predict_hits",
    "random_words",
    "run_schedule",
    "shown_length",
    "trace_window",
]

__getattr__ = lazy_names(__name__, {
    "AgentLoop": "agent", "TOOL_TURN_TAGS": "agent", "assistant_turn": "agent",
    "Arrival": "arrivals", "gamma_gaps": "arrivals", "parse_arrival": "arrivals",
    "MAX_BODY_BYTES": "bounds", "MAX_CONCURRENCY": "bounds", "MAX_CONNECTIONS": "bounds",
    "MAX_HORIZON_S": "bounds", "MAX_PREFIX_GROUPS": "bounds", "MAX_PREFIX_TOTAL_TOKENS": "bounds",
    "MAX_REQUESTS": "bounds", "MAX_TOKENS": "bounds", "MAX_TURNS": "bounds", "MAX_WORKERS": "bounds",
    "check_count": "bounds",
    "AnyWorkload": "build", "build_workload": "build", "is_sessions": "build",
    "check_cancel_spec": "cancel",
    "make_counter": "counters",
    "format_duration": "durations", "parse_duration_flag": "durations",
    "LengthDist": "lengths", "check_length": "lengths", "highest_length": "lengths",
    "parse_length": "lengths", "plain_number": "lengths", "shown_length": "lengths",
    "ModelMix": "models", "parse_models": "models",
    "predict_hits": "prefix_cache", "CachePredictionJSON": "prefix_cache", "TraceShape": "trace_shape", "Lengths": "trace_shape",
    "FloatArray": "schedule", "Schedule": "schedule", "run_schedule": "schedule", "trace_window": "schedule",
    "Session": "sessions", "Turn": "sessions",
    "RatioCounter": "sizing", "TableCounter": "sizing", "TemplateCost": "sizing", "fit_line": "sizing",
    "TokenCounter": "text", "WORDS": "text", "Messages": "text", "random_words": "text",
    "ThinkTime": "think", "parse_think_time": "think",
    "describe_trace": "trace_shape:trace_shape",
    "TraceWorkload": "trace_workload",
    "Trace": "traces", "load_trace": "traces",
})
