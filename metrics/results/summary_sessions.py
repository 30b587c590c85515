"""The typed views of summary.json's `stalls` (metrics.summary.build: gaps between chunks over the stall
threshold) and `sessions` (metrics.summary.sessions: what became of a run's conversations)."""

from __future__ import annotations

from typing import Any

from metrics.results.frozen_view import frozen
from metrics.results.summary_parse import JsonObject, count, int_or_none, number_or_none


@frozen
class Stalls:
    threshold_s: float | None  # a gap longer than this is a stall
    count: int = 0
    total_s: float = 0.0
    requests_with_stalls: int = 0

    @classmethod
    def from_json(cls, value: Any) -> Stalls | None:
        if not isinstance(value, dict):
            return None
        total = number_or_none(value.get("total_s"))
        return cls(number_or_none(value.get("threshold_s")), count(value.get("count")),
                   0.0 if total is None else total, count(value.get("requests_with_stalls")))

    def to_json(self) -> JsonObject:
        return {"threshold_s": self.threshold_s, "count": self.count, "total_s": self.total_s,
                "requests_with_stalls": self.requests_with_stalls}


@frozen
class Sessions:
    """A run's conversations (`--turns`): how many ended early, and their turns."""

    sessions: int = 0
    completed: int = 0
    ended_early: int = 0
    turns: int = 0
    turns_sent: int = 0
    turns_not_sent: int = 0
    turns_measured: int = 0
    turns_per_session_mean: float | None = None
    turns_per_session_max: int | None = None

    @classmethod
    def from_json(cls, value: Any) -> Sessions | None:
        if not isinstance(value, dict):
            return None
        per = value.get("turns_per_session")
        per = per if isinstance(per, dict) else {}
        sessions, completed, ended_early, turns, sent, not_sent, measured = (count(value.get(k)) for k in _COUNTS)
        return cls(sessions, completed, ended_early, turns, sent, not_sent, measured, number_or_none(per.get("mean")),
                   int_or_none(per.get("max")))

    def to_json(self) -> JsonObject:
        out: JsonObject = {k: getattr(self, k) for k in _COUNTS}
        out["turns_per_session"] = {"mean": self.turns_per_session_mean, "max": self.turns_per_session_max}
        return out


_COUNTS = ("sessions", "completed", "ended_early", "turns", "turns_sent", "turns_not_sent", "turns_measured")
