"""The measurement window and the throughputs measured over it.

A request is *measured* when its intended send time a falls in [warm-up, end − cool-down), times
relative to the run anchor. `end` is the schedule's end when given, else the last intended time; with
no cool-down there is no upper bound at all (otherwise the request scheduled last would be cut by the
half-open interval). The window's duration runs from the first measured send to the last measured
completion (stream close, else the last content chunk).

Throughputs count completed (status "ok") measured requests and their tokens over that duration —
a failed request's partial output is not served work. The offered rate is (measured − 1) over the span
of their intended times: that many intervals separate the first and last intended sends, so a
constant-rate schedule reads exactly its rate; the achieved send rate is the same over actual sends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from metrics.latency import last_chunk_ns
from metrics.records import OK, RequestFrame
from metrics.units import NS_PER_S

if TYPE_CHECKING:  # the views are imported where a summary is made: a run imports this before its first request
    from metrics.results import Throughput
    from metrics.results import Window as WindowView

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(slots=True)
class Window:
    measured: BoolArray
    start_ns: int | None  # first measured send
    end_ns: int | None  # last measured completion
    warmup_s: float
    cooldown_s: float

    @property
    def duration_s(self) -> float | None:
        if self.start_ns is None or self.end_ns is None or self.end_ns <= self.start_ns:
            return None
        return (self.end_ns - self.start_ns) / NS_PER_S

    def view(self) -> WindowView:
        """As summary.json's `run.window` holds it."""
        from metrics.results import Window as WindowView

        return WindowView(
            measured=int(self.measured.sum()),
            duration_s=self.duration_s,
            warmup_s=self.warmup_s,
            cooldown_s=self.cooldown_s,
            present=True,
            start_s=None if self.start_ns is None else self.start_ns / NS_PER_S,
            end_s=None if self.end_ns is None else self.end_ns / NS_PER_S,
        )


def completion_ns(frame: RequestFrame) -> tuple[IntArray, BoolArray]:
    """When each request finished: stream close, else its last content chunk; and whether known."""
    last = last_chunk_ns(frame)
    has_chunk = frame.chunk_count > 0
    done = np.where(frame.has_closed, frame.closed_ns, last)
    return done, frame.has_closed | has_chunk


def measurement_window(
    frame: RequestFrame, *, warmup_s: float, cooldown_s: float, schedule_end_s: float | None
) -> Window:
    if warmup_s < 0 or cooldown_s < 0:
        raise ValueError("warm-up and cool-down must be >= 0")
    a = frame.intended_ns
    measured = a >= round(warmup_s * NS_PER_S) if warmup_s > 0 else np.ones(frame.n, dtype=np.bool_)
    if cooldown_s > 0 and frame.n:
        end_ns = round(schedule_end_s * NS_PER_S) if schedule_end_s is not None else int(a.max())
        measured &= a < end_ns - round(cooldown_s * NS_PER_S)
    sent = measured & frame.has_sent
    done, known = completion_ns(frame)
    finished = measured & known
    return Window(
        measured=measured,
        start_ns=int(frame.sent_ns[sent].min()) if sent.any() else None,
        end_ns=int(done[finished].max()) if finished.any() else None,
        warmup_s=warmup_s,
        cooldown_s=cooldown_s,
    )


def _rate(count: int, span_ns: int) -> float | None:
    return (count - 1) / (span_ns / NS_PER_S) if count >= 2 and span_ns > 0 else None


def throughput(frame: RequestFrame, window: Window) -> Throughput:
    """requests/s, output and total tokens/s over the window; offered vs achieved send rate."""
    duration = window.duration_s
    done = window.measured & (frame.status == OK)
    out_tokens = float(np.nansum(frame.output_tokens[done]))
    total_tokens = out_tokens + float(np.nansum(frame.prompt_tokens[done]))
    intended = frame.intended_ns[window.measured]
    sent = frame.sent_ns[window.measured & frame.has_sent]

    def per_s(value: float) -> float | None:
        return value / duration if duration else None

    from metrics.results import Throughput

    return Throughput(
        duration_s=duration,
        requests_per_s=per_s(int(done.sum())),
        output_tokens_per_s=per_s(out_tokens),
        total_tokens_per_s=per_s(total_tokens),
        offered_rps=_rate(intended.size, int(intended.max() - intended.min())) if intended.size else None,
        achieved_rps=_rate(sent.size, int(sent.max() - sent.min())) if sent.size else None,
    )
