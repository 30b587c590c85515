"""Planned cancellations in the accounting (docs/metrics.md, "Cancelled requests").

A run cancels requests for three reasons, each its own `error_kind` under status "cancelled":

- `planned_cancel`: the client closed the stream as the run planned (`--cancel-rate`, a user pressing stop);
- `session_ended`: a conversation turn never sent, because an earlier turn of its session failed or was
  cancelled as planned;
- `client_cancelled`: the run stopped (Ctrl-C, SIGTERM, the grace period's end) with the request in flight.

The rule for goodput: a planned cancellation never finishes, by the run's own choice, so it says nothing
about whether the server would have met the SLO. It is left out of goodput's denominator, and so are the
turns its session then never sent (the user who stopped the answer left; those turns were never due). Every
other failed or cancelled request stays in it. Latency percentiles take status "ok" only, so no cancelled
request is ever a latency sample.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from metrics.records import RequestFrame

PLANNED_CANCEL = "planned_cancel"
SESSION_ENDED = "session_ended"
BoolArray = npt.NDArray[np.bool_]


def planned(frame: RequestFrame) -> BoolArray:
    """The requests the client cancelled as planned."""
    return np.fromiter((k == PLANNED_CANCEL for k in frame.error_kind), np.bool_, frame.n)


def abandoned_turns(frame: RequestFrame, cancelled: BoolArray) -> BoolArray:
    """Turns never sent because a turn of their session was cancelled as planned (a session ends at its
    first failed or cancelled turn, so every never-sent turn of such a session is one of these)."""
    if not cancelled.any():
        return np.zeros(frame.n, np.bool_)
    ended = np.fromiter((k == SESSION_ENDED for k in frame.error_kind), np.bool_, frame.n)
    sessions = frame.session[cancelled]
    sessions = sessions[~np.isnan(sessions)]
    return ended & np.isin(frame.session, sessions)


def excluded_from_goodput(frame: RequestFrame) -> BoolArray:
    """Planned cancellations and the turns their sessions never sent: outside goodput's denominator."""
    cancelled = planned(frame)
    return cancelled | abandoned_turns(frame, cancelled)


def cancel_counts(frame: RequestFrame, measured: BoolArray) -> dict[str, int]:
    """The `requests` counters of planned cancellations (all records, and the measured ones)."""
    cancelled = planned(frame)
    abandoned = abandoned_turns(frame, cancelled)
    return {
        "planned_cancels": int(cancelled.sum()),
        "in_window_planned_cancels": int((cancelled & measured).sum()),
        "turns_abandoned_after_cancel": int(abandoned.sum()),
    }
