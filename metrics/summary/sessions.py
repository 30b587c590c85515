"""The `sessions` section of summary.json: what became of the conversations of a run with `--turns`.

A session ends early when one of its turns fails or is cancelled as planned (`--cancel-rate`): its remaining
turns are never sent and each is one
record with status "cancelled" and error_kind "session_ended" (so `requests` still adds up). The section
is absent from runs without conversations.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from metrics.records import OK, RequestFrame

if TYPE_CHECKING:  # the view is imported where a summary is made: a run imports this before its first request
    from metrics.results import Sessions

SESSION_ENDED = "session_ended"  # the error_kind of a turn never sent because an earlier one failed
BoolArray = npt.NDArray[np.bool_]


def sessions_section(frame: RequestFrame, measured: BoolArray) -> Sessions | None:
    """The `sessions` section when some record is a conversation turn, else None (no section)."""
    has = ~np.isnan(frame.session)
    if not has.any():
        return None
    ids = frame.session[has]
    unique, owner = np.unique(ids, return_inverse=True)
    not_sent = np.fromiter((k == SESSION_ENDED for k in frame.error_kind), np.bool_, frame.n)[has]
    ok = (frame.status == OK)[has]
    all_ok = np.bincount(owner, weights=(~ok).astype(np.float64), minlength=unique.size) == 0
    ended = np.bincount(owner, weights=not_sent.astype(np.float64), minlength=unique.size) > 0
    turns = np.bincount(owner, minlength=unique.size)
    from metrics.results import Sessions

    return Sessions(
        sessions=int(unique.size),
        completed=int(all_ok.sum()),
        ended_early=int(ended.sum()),
        turns=int(has.sum()),
        turns_sent=int(frame.has_sent[has].sum()),
        turns_not_sent=int(not_sent.sum()),
        turns_measured=int(measured[has].sum()),
        turns_per_session_mean=float(turns.mean()),
        turns_per_session_max=int(turns.max()),
    )
