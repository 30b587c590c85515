"""The requests of a worker that was lost (its process died, its Ray actor or node failed, it would not
stop): each becomes one record, so the run's counts still add up and nothing is silently dropped.

A lost request's record has status "error", error_kind "worker_lost", no send time (the worker that knew
it is gone, so it counts among the requests never sent) and the reason in its message. Which requests:

- open loop: every entry of the worker's share that was due by then (intended at or before the moment
  the worker was lost, or before the run stopped) and whose record never came back: the ones in flight
  and the ones finished in the worker's last, unsent batch alike. With `--on-worker-failure continue` the
  rest of its share is recorded lost as each entry falls due, since the run goes on without it.
- closed loop: the requests it had started and not finished; with `continue` and `--requests`, also the
  ids of its share it never got to, at the end of the run.
- conversations: for each session it had started (or that was due), every turn after the last one that
  came back, unless that one was cancelled (the run stopped the session; the turns a failed turn leaves
  unsent come back as cancelled records of their own).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from loadgen.http import WorkerLost
from loadgen.workers.share import Share
from metrics.records import RequestRecord

WORKER_LOST = WorkerLost.kind


def lost_record(*, rid: int, intended_ns: int, worker: int, reason: str, tags: dict[str, str] | None = None,
                prompt_tokens_target: int | None = None, output_tokens_target: int | None = None,
                session: int | None = None, turn: int | None = None) -> RequestRecord:
    return RequestRecord(id=rid, intended_ns=intended_ns, sent_ns=None, status="error", error_kind=WORKER_LOST,
                         error_message=reason, tags=dict(tags or {}), prompt_tokens_target=prompt_tokens_target,
                         output_tokens_target=output_tokens_target, worker=worker, session=session, turn=turn)


class Ledger:
    """What the parent knows of one worker's requests: what it started, what came back, and, once the worker
    is lost, which of its requests are lost."""

    def __init__(self, share: Share, *, offsets: npt.NDArray[np.float64] | None, sessions: bool,
                 count: int | None) -> None:
        self.share = share
        self.offsets = offsets
        self.sessions = sessions
        self.count = count
        self.sent = 0  # the worker's own counters, as last reported
        self.in_flight = 0
        self.records = 0  # records of this worker delivered (received and lost)
        self.lost_records = 0
        self.received: set[int] = set()  # request ids (sessions: session indices with a turn back)
        self.started: set[int] = set()
        self.turns: dict[int, tuple[int, str]] = {}  # session → (last turn back, its status)
        self.max_id = share.worker - share.workers  # the highest record id back; lost turns get ids above it
        self.lost_reason: str | None = None
        self.lost_at_ns = 0
        self._cursor = 0  # open loop: position in the share of the next entry to judge
        self._final_done = False

    @property
    def lost(self) -> bool:
        return self.lost_reason is not None

    def note(self, record: RequestRecord) -> None:
        self.records += 1
        self.max_id = max(self.max_id, record.id)
        if self.sessions and record.session is not None:
            last, _ = self.turns.get(record.session, (0, "ok"))
            if record.turn is not None and record.turn >= last:
                self.turns[record.session] = (record.turn, record.status)
        else:
            self.received.add(record.id)

    def lose(self, reason: str, at_ns: int) -> None:
        self.lost_reason = reason
        self.lost_at_ns = at_ns
        self.in_flight = 0

    def due(self, upto_ns: int | None, workload: Any) -> list[RequestRecord]:
        """The lost records not made yet whose request was due by `upto_ns` (run time); None: every one the
        worker's share still holds (the run reached its end without it)."""
        if not self.lost:
            return []
        out = self._open_loop(upto_ns, workload) if self.share.open_loop else self._closed_loop(upto_ns, workload)
        self.records += len(out)
        self.lost_records += len(out)
        return out

    def _open_loop(self, upto_ns: int | None, workload: Any) -> list[RequestRecord]:
        assert self.share.ids is not None and self.offsets is not None
        ids = self.share.ids
        out: list[RequestRecord] = []
        while self._cursor < ids.size:
            i = int(ids[self._cursor])
            intended = round(float(self.offsets[i]) * 1e9)
            if upto_ns is not None and intended > upto_ns:
                break
            self._cursor += 1
            if self.sessions:
                out += self._session_turns(i, intended, workload)
            elif i not in self.received:
                out.append(self._request(i, intended, workload))
        return out

    def _closed_loop(self, upto_ns: int | None, workload: Any) -> list[RequestRecord]:
        out: list[RequestRecord] = []
        if self._cursor == 0:  # first: what it had started, lost at once
            self._cursor = 1
            for i in sorted(self.started):
                out += self._session_turns(i, self.lost_at_ns, workload) if self.sessions else (
                    [] if i in self.received else [self._request(i, self.lost_at_ns, workload)])
        if upto_ns is None and self.count is not None and not self._final_done:
            self._final_done = True  # the run went on to its end: the ids it never got to were due too
            for i in range(self.share.worker, self.count, self.share.workers):
                if i in self.started or i in self.received or i in self.turns:
                    continue
                out += self._session_turns(i, self.lost_at_ns, workload) if self.sessions else [
                    self._request(i, self.lost_at_ns, workload)]
        return out

    def _request(self, i: int, intended_ns: int, workload: Any) -> RequestRecord:
        # Its tags and targets only: a workload with images gives them without making the images.
        item = workload.text_item(i) if hasattr(workload, "text_item") else workload.item(i)
        return lost_record(rid=i, intended_ns=intended_ns, worker=self.share.worker, reason=self._message(),
                           tags=item.tags, prompt_tokens_target=item.prompt_tokens_target,
                           output_tokens_target=item.max_tokens)

    def _session_turns(self, index: int, first_ns: int, workload: Any) -> list[RequestRecord]:
        last, status = self.turns.get(index, (0, "ok"))
        if status == "cancelled":
            return []  # the run stopped it: no later turn was due (a failed session's turns come back cancelled)
        session = workload.session(index)
        out = []
        for number, turn in enumerate(session.turns[last:], start=last + 1):
            self.max_id += self.share.workers
            intended = first_ns if number == 1 else self.lost_at_ns
            out.append(lost_record(rid=self.max_id, intended_ns=intended, worker=self.share.worker,
                                   reason=self._message(), tags=session.tags, output_tokens_target=turn.max_tokens,
                                   session=index, turn=number))
        return out

    def _message(self) -> str:
        return f"worker {self.share.worker} was lost ({self.lost_reason}); this request was in flight or never sent"
