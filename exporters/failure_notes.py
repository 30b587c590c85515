"""The console lines that say why requests failed, in the server's own words, and whether the server did
what the requests asked (`--ignore-eos`). They read `summary.json`'s `requests` (metrics.summary.failures)
and tolerate an older summary without those keys (nothing is printed then).
"""

from __future__ import annotations

from typing import Any


def failure_text(failure: dict[str, Any]) -> str:
    """One failure as a reader wants it: the server's message ("HTTP 404: NotFoundError: The model `x`
    does not exist."), or the error kind and the client's message for a failure of another kind."""
    kind = str(failure.get("kind") or "unknown")
    message = str(failure.get("message") or "")
    status = failure.get("http_status")
    if kind == "http_status":
        return message or f"HTTP {status}"
    return f"{kind}: {message}" if message else kind


def _count(req: dict[str, Any], key: str) -> int:
    value = req.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def all_failed_alike(req: dict[str, Any]) -> str | None:
    """The one line for a run in which nothing succeeded and every failure was the same; else None."""
    messages = req.get("failure_messages")
    if not isinstance(messages, list) or len(messages) != 1 or req.get("failure_messages_distinct") != 1:
        return None
    failed, records = _count(req, "failed"), _count(req, "records")
    if _count(req, "succeeded") or not failed:
        return None
    text = failure_text(messages[0])
    if failed == records:
        return f"all {failed} requests failed the same way: {text}"
    return f"no request succeeded; the {failed} that failed (of {records}) all failed the same way: {text}"


def failure_lines(summary: dict[str, Any]) -> list[str]:
    """The server's messages for the failed requests (first distinct ones, counted) and the ignore_eos note."""
    req = summary.get("requests") or {}
    lines = []
    alike = all_failed_alike(req)
    messages = req.get("failure_messages")
    if alike is not None:
        lines.append(f"FAILED: {alike}")
    elif isinstance(messages, list) and messages:
        distinct = _count(req, "failure_messages_distinct") or len(messages)
        shown = f"the first {len(messages)} of {distinct}" if distinct > len(messages) else f"{distinct}"
        lines.append(f"failures ({shown} distinct, counted over the run):")
        lines += [f"  {_count(m, 'count')} × {failure_text(m)}" for m in messages if isinstance(m, dict)]
    note = ignore_eos_note(req, summary.get("run") or {})
    if note is not None:
        lines.append(note)
    return lines


def ignore_eos_note(req: dict[str, Any], run: dict[str, Any]) -> str | None:
    """Once, when requests sent with ignore_eos ended with "stop" before their max_tokens."""
    resolved = run.get("resolved")
    stopped = _count(req, "stopped_before_max_tokens")
    if not stopped or not isinstance(resolved, dict) or resolved.get("ignore_eos") is not True:
        return None
    return (f"WARNING: the server does not honour ignore_eos: {stopped} of {_count(req, 'succeeded')} successful"
            " requests ended with finish_reason 'stop' before their max_tokens although every request asked to"
            " ignore the end of sequence; their output lengths are the model's own, not --output-tokens")
