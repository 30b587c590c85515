"""A run whose requests fail: stop early when the server refuses every request alike, and exit 1 when more
failed than `--max-failed` allows (README, exit codes).

Stopping early (`FailingAlike`, a record hook): a wrong model name, an option the server rejects or a
wrong path makes every request fail the same way, and sending the whole load then only repeats the answer
(500 of 500 at 50 req/s). When the first EARLY_STOP_AFTER requests to end, the run's first request (id 0)
among them, all failed with one error kind, HTTP status and message, and none succeeded, the hook stops
dispatching (`--keep-going` sends them all anyway); in-flight requests get the grace period as after any
stop, the outputs are written, and the run exits 1 with one line quoting the server.

Only a definite answer counts (EARLY_STOP_KINDS: an HTTP error status, an error event in the stream, a
body that is not a stream, a refused connection). A timeout or a cut connection never does: a slow or
overloaded server is not one that refuses the requests. Waiting for request 0 keeps a server that admits
the first requests and turns the later ones away (429 while its queue is full) from looking like one that
refuses everything: its first request is still in flight, and once it succeeds the hook is done.
Records that were never sent (a conversation's turns after a failed turn, cancellations) say nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loadgen.spec import parse_fail_limit
from metrics.records import RequestRecord

if TYPE_CHECKING:
    from metrics.results import Requests

EARLY_STOP_AFTER = 10
EARLY_STOP_KINDS = frozenset({"http_status", "mid_stream_error", "non_sse_response", "connect_error"})
NOT_SENT_KINDS = frozenset({"session_ended", "client_cancelled", "worker_lost"})
# ... nor does a stream the client closed as planned (--cancel-rate): it may have ended before any answer.
SAYS_NOTHING_KINDS = NOT_SENT_KINDS | {"planned_cancel"}


class FailingAlike(RuntimeError):
    """The run stopped early: its first requests all failed the same way (RunState.failure)."""

    def __init__(self, count: int, record: RequestRecord) -> None:
        self.count = count
        self.kind = record.error_kind or "unknown"
        self.http_status = record.http_status
        self.message = record.error_message or ""
        said = self.message if self.kind == "http_status" and self.message else (
            f"{self.kind}: {self.message}" if self.message else self.kind)
        super().__init__(f"stopped early: the first {count} requests all failed the same way: {said} "
                         "(--keep-going sends every request anyway)")


class StopWhenFailingAlike:
    """Record hook: raises `FailingAlike` once, when the run's first requests all failed alike (see the
    module docstring); a record hook that raises stops the run (loadgen.dispatch.runner.deliver_record)."""

    def __init__(self, after: int = EARLY_STOP_AFTER) -> None:
        self.after = after
        self.armed = True
        self.count = 0
        self.first_seen = False  # request 0 has ended, the same way as the others
        self._failure: tuple[str | None, int | None, str | None] | None = None

    def __call__(self, record: RequestRecord) -> None:
        if not self.armed or record.error_kind in SAYS_NOTHING_KINDS:
            return
        failure = (record.error_kind, record.http_status, record.error_message)
        if record.status != "error" or record.error_kind not in EARLY_STOP_KINDS or \
                self._failure not in (None, failure):
            self.armed = False  # a success, a failure of another kind, or two different failures
            return
        self._failure = failure
        self.count += 1
        self.first_seen = self.first_seen or record.id == 0
        if self.count >= self.after and self.first_seen:
            self.armed = False
            raise FailingAlike(self.count, record)


def early_stop_hooks(keep_going: bool) -> list[StopWhenFailingAlike]:
    """The hooks a run adds after its record writer (none with --keep-going)."""
    return [] if keep_going else [StopWhenFailingAlike()]


def too_many_failed(requests: Requests, max_failed: str) -> str | None:
    """The line for a run with more failed requests than `--max-failed` allows, else None. The share is of
    the requests that ended either way (succeeded + failed; cancelled ones and a lost worker's are left out)."""
    # A lost worker's requests are not the server's failures (--on-worker-failure decides about those).
    lost = (requests.errors or {}).get("worker_lost", 0)
    failed, ok = (requests.failed or 0) - lost, requests.succeeded
    limit = parse_fail_limit(max_failed)
    if not ok or not limit.exceeded(failed, failed + ok):  # nothing succeeded: conclusion says so
        return None
    shown = f"{failed / (failed + ok):.0%}" if limit.share is not None else str(failed)
    return (f"goodput: error: {failed} of {failed + ok} requests failed ({shown} > --max-failed {limit}); "
            "--max-failed 100% accepts any number")
