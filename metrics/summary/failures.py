"""What the server said when requests failed, and how the successful ones ended, for `summary.json`'s
`requests` section (docs/formats.md):

- `failure_messages`: the first MESSAGES_SHOWN distinct failures, in the order they first appear in the
  records, each `{kind, http_status, message, count}` (a failure is its error kind, HTTP status and message
  together; `count` is over the whole run), and `failure_messages_distinct`, how many distinct ones there
  were in all. Only failed requests (status "error") count: a cancelled one said nothing.
- `stopped_before_max_tokens`: successful requests that ended with finish_reason "stop" before the
  max_tokens they asked for. With `--ignore-eos` there should be none: a server that stops anyway does
  not honour `ignore_eos` (the console says so).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from metrics.records import ERROR, OK, RequestFrame

if TYPE_CHECKING:  # the views are imported where a summary is made: a run imports this before its first request
    from metrics.results import FailureMessage

MESSAGES_SHOWN = 5

Failure = tuple[str, int | None, str]  # kind, HTTP status, message


@dataclass(frozen=True, slots=True)
class Failures:
    """The `requests` figures of this module."""

    messages: tuple[FailureMessage, ...]
    distinct: int
    stopped_before_max_tokens: int


def failure_messages(frame: RequestFrame) -> tuple[list[FailureMessage], int]:
    """(the first MESSAGES_SHOWN distinct failures with their counts, how many distinct failures in all)."""
    counts: dict[Failure, int] = {}
    messages = frame.error_message or [None] * frame.n
    statuses = frame.http_status or [None] * frame.n
    for i in np.flatnonzero(frame.status == ERROR).tolist():
        key = (frame.error_kind[i] or "unknown", statuses[i], messages[i] or "")
        counts[key] = counts.get(key, 0) + 1  # dicts keep the order of first appearance
    from metrics.results import FailureMessage

    shown = [FailureMessage(kind, message, status, n) for (kind, status, message), n in list(counts.items())[:MESSAGES_SHOWN]]
    return shown, len(counts)


def stopped_before_max_tokens(frame: RequestFrame) -> int:
    """Successful requests that finished with "stop" short of the max_tokens they asked for."""
    if not frame.finish_reason or frame.output_target.shape[0] != frame.n:
        return 0
    stop = np.array([reason == "stop" for reason in frame.finish_reason], dtype=np.bool_)
    short = frame.output_tokens < frame.output_target  # NaN (no max_tokens, or no count) compares False
    return int(((frame.status == OK) & stop & short).sum())


def failures_section(frame: RequestFrame) -> Failures:
    """The `requests` figures of this module."""
    shown, distinct = failure_messages(frame)
    return Failures(tuple(shown), distinct, stopped_before_max_tokens(frame))
