"""The typed views of summary.json's request counts (`requests`, metrics.summary.build and
metrics.summary.failures) and rates (`throughput`). A count the document lacks reads 0, as every
reader has read it; `records` and `failed` keep None for absent because a reader tells the two apart."""

from __future__ import annotations

from typing import Any

from metrics.results.frozen_view import frozen
from metrics.results.summary_parse import JsonObject, count, counts, int_or_none, number_or_none


@frozen
class FailureMessage:
    """One distinct failure, in the server's words (metrics.summary.failures)."""

    kind: str  # "unknown" when the document gives none
    message: str  # "" when none
    http_status: int | None
    count: int

    @classmethod
    def from_json(cls, value: Any) -> FailureMessage | None:
        if not isinstance(value, dict):
            return None
        return cls(str(value.get("kind") or "unknown"), str(value.get("message") or ""),
                   int_or_none(value.get("http_status")), count(value.get("count")))

    def to_json(self) -> dict[str, str | int | None]:
        return {"kind": self.kind, "http_status": self.http_status, "message": self.message, "count": self.count}


@frozen
class Requests:
    records: int | None  # None: schema 1, where `sent` counted every record
    failed: int | None
    sent: int = 0
    never_sent: int = 0
    lost_with_worker: int = 0
    succeeded: int = 0
    cancelled: int = 0
    failed_before_send: int = 0
    cancelled_before_send: int = 0
    errors: dict[str, int] | None = None  # error kind → count
    in_window: int = 0
    in_window_ok: int = 0
    in_window_failed: int = 0
    in_window_cancelled: int = 0
    ok_without_content: int = 0
    planned_cancels: int = 0
    failure_messages: tuple[FailureMessage, ...] | None = None  # None: no list in the document
    failure_messages_distinct: int = 0
    stopped_before_max_tokens: int = 0
    in_window_planned_cancels: int = 0
    turns_abandoned_after_cancel: int = 0

    @classmethod
    def from_json(cls, req: Any) -> Requests:
        """The view of `requests`; every count 0 (records and failed None) when it is not an object."""
        if not isinstance(req, dict):
            return cls(None, None)
        messages = req.get("failure_messages")
        return cls(
            records=count(req.get("records")) if "records" in req else None,
            failed=int_or_none(req.get("failed")),
            sent=count(req.get("sent")),
            never_sent=count(req.get("never_sent")),
            lost_with_worker=count(req.get("lost_with_worker")),
            succeeded=count(req.get("succeeded")),
            cancelled=count(req.get("cancelled")),
            failed_before_send=count(req.get("failed_before_send")),
            cancelled_before_send=count(req.get("cancelled_before_send")),
            in_window=count(req.get("in_window")),
            in_window_ok=count(req.get("in_window_ok")),
            in_window_failed=count(req.get("in_window_failed")),
            in_window_cancelled=count(req.get("in_window_cancelled")),
            ok_without_content=count(req.get("ok_without_content")),
            planned_cancels=count(req.get("planned_cancels")),
            failure_messages_distinct=count(req.get("failure_messages_distinct")),
            stopped_before_max_tokens=count(req.get("stopped_before_max_tokens")),
            in_window_planned_cancels=count(req.get("in_window_planned_cancels")),
            turns_abandoned_after_cancel=count(req.get("turns_abandoned_after_cancel")),
            errors=counts(req.get("errors")),
            failure_messages=(tuple(m for m in map(FailureMessage.from_json, messages) if m is not None)
                              if isinstance(messages, list) else None),
        )

    def to_json(self) -> JsonObject:
        """As metrics.summary.build writes it (every key, in its order)."""
        return {
            "records": self.records, "sent": self.sent, "never_sent": self.never_sent,
            "lost_with_worker": self.lost_with_worker, "succeeded": self.succeeded, "failed": self.failed,
            "cancelled": self.cancelled, "failed_before_send": self.failed_before_send,
            "cancelled_before_send": self.cancelled_before_send, "errors": self.errors, "in_window": self.in_window,
            "in_window_ok": self.in_window_ok, "in_window_failed": self.in_window_failed,
            "in_window_cancelled": self.in_window_cancelled, "ok_without_content": self.ok_without_content,
            "planned_cancels": self.planned_cancels, "in_window_planned_cancels": self.in_window_planned_cancels,
            "turns_abandoned_after_cancel": self.turns_abandoned_after_cancel,
            "failure_messages": [m.to_json() for m in self.failure_messages or ()],
            "failure_messages_distinct": self.failure_messages_distinct,
            "stopped_before_max_tokens": self.stopped_before_max_tokens,
        }

    def failed_count(self) -> int:
        return self.failed or 0


@frozen
class Throughput:
    duration_s: float | None = None
    requests_per_s: float | None = None
    output_tokens_per_s: float | None = None
    total_tokens_per_s: float | None = None
    offered_rps: float | None = None
    achieved_rps: float | None = None

    @classmethod
    def from_json(cls, thr: Any) -> Throughput:
        if not isinstance(thr, dict):
            return cls()
        return cls(*(number_or_none(thr.get(key)) for key in _RATES))

    def to_json(self) -> dict[str, float | None]:
        return {key: getattr(self, key) for key in _RATES}

    def figure(self, name: str) -> float | None:
        """The figure named as in summary.json (requests_per_s, offered_rps, ...); None for another name."""
        return getattr(self, name) if name in _RATES else None


_RATES = ("duration_s", "requests_per_s", "output_tokens_per_s", "total_tokens_per_s", "offered_rps", "achieved_rps")
