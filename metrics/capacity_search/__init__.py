"""The capacity search: the highest request rate whose SLO attainment is shown, with stated confidence, to
meet a target. Pure arithmetic over probes (`search.py`) and proportion intervals (`proportion.py`); the
load generator runs the probes (`loadgen/sweep/`).

The names below are imported on first use (metrics.lazy_face).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics import lazy_names

if TYPE_CHECKING:
    from metrics.capacity_search.evidence import (
        Observation,
        RateEvidence,
        SearchSettings,
        pool,
        requests_per_point,
    )
    from metrics.capacity_search.proportion import METHODS, Method, proportion_interval
    from metrics.capacity_search.saturation import (
        LAG_SHARE_OF_GAP,
        MIN_LAG_LIMIT_S,
        RATE_SHORTFALL,
        client_hint,
        client_limited,
    )
    from metrics.capacity_search.search import (
        Probe,
        SearchResult,
        Stop,
        conclude,
        from_ceiling,
        next_step,
        round_rate,
    )

__all__ = [
    "LAG_SHARE_OF_GAP",
    "METHODS",
    "MIN_LAG_LIMIT_S",
    "RATE_SHORTFALL",
    "Method",
    "Observation",
    "Probe",
    "RateEvidence",
    "SearchResult",
    "SearchSettings",
    "Stop",
    "client_hint",
    "client_limited",
    "conclude",
    "from_ceiling",
    "next_step",
    "pool",
    "proportion_interval",
    "requests_per_point",
    "round_rate",
]

__getattr__ = lazy_names(__name__, {
    "Observation": "evidence", "RateEvidence": "evidence", "SearchSettings": "evidence", "pool": "evidence",
    "requests_per_point": "evidence",
    "METHODS": "proportion", "Method": "proportion", "proportion_interval": "proportion",
    "LAG_SHARE_OF_GAP": "saturation", "MIN_LAG_LIMIT_S": "saturation", "RATE_SHORTFALL": "saturation",
    "client_hint": "saturation", "client_limited": "saturation",
    "Probe": "search", "SearchResult": "search", "Stop": "search", "conclude": "search",
    "from_ceiling": "search", "next_step": "search", "round_rate": "search",
})
