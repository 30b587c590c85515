"""The console lines that say why requests failed, in the server's own words, and whether the server did
what the requests asked (`--ignore-eos`). They read the summary's typed view of `requests`
(metrics.results.summary_requests) and tolerate an older summary without those keys (nothing is printed then).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the summary's view is imported where a summary is read, not at start-up
    from metrics.results import FailureMessage, Json, Requests, Run, SummaryView



def failure_text(failure: FailureMessage) -> str:
    """One failure as a reader wants it: the server's message ("HTTP 404: NotFoundError: The model `x`
    does not exist."), or the error kind and the client's message for a failure of another kind."""
    kind, message = failure.kind, failure.message
    if kind == "http_status":
        return message or f"HTTP {failure.http_status}"
    return f"{kind}: {message}" if message else kind


def all_failed_alike(req: Mapping[str, Json]) -> str | None:
    """The one line for a run in which nothing succeeded and every failure was the same; else None.
    `req` is summary.json's `requests` as the run wrote it (parsed here, at the boundary)."""
    from metrics.results import Requests

    return failed_alike(Requests.from_json(req))


def failed_alike(req: Requests) -> str | None:
    """all_failed_alike, on the summary's typed view."""
    messages = req.failure_messages
    if messages is None or len(messages) != 1 or req.failure_messages_distinct != 1:
        return None
    failed, records = req.failed_count(), req.records or 0
    if req.succeeded or not failed:
        return None
    text = failure_text(messages[0])
    if failed == records:
        return f"all {failed} requests failed the same way: {text}"
    return f"no request succeeded; the {failed} that failed (of {records}) all failed the same way: {text}"


def failure_lines(summary: SummaryView) -> list[str]:
    """The server's messages for the failed requests (first distinct ones, counted) and the ignore_eos note."""
    req = summary.requests
    lines = []
    alike = failed_alike(req)
    messages = req.failure_messages
    if alike is not None:
        lines.append(f"FAILED: {alike}")
    elif messages:
        distinct = req.failure_messages_distinct or len(messages)
        shown = f"the first {len(messages)} of {distinct}" if distinct > len(messages) else f"{distinct}"
        lines.append(f"failures ({shown} distinct, counted over the run):")
        lines += [f"  {m.count} × {failure_text(m)}" for m in messages]
    note = ignore_eos_note(req, summary.run)
    if note is not None:
        lines.append(note)
    return lines


def ignore_eos_note(req: Requests, run: Run) -> str | None:
    """Once, when requests sent with ignore_eos ended with "stop" before their max_tokens."""
    stopped = req.stopped_before_max_tokens
    if not stopped or run.resolved.ignore_eos is not True:
        return None
    return (f"WARNING: the server does not honour ignore_eos: {stopped} of {req.succeeded} successful"
            " requests ended with finish_reason 'stop' before their max_tokens although every request asked to"
            " ignore the end of sequence; their output lengths are the model's own, not --output-tokens")
