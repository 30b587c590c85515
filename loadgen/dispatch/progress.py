"""Live progress on stderr: sent, in flight, done, errors, running TTFT/ITL p50/p99, elapsed, and how far
the run has come: percent done and the time left (`completion`).

Latency figures come from the most recent requests only (a bounded window), so the display costs the
same at minute 1 and hour 10. On a terminal it redraws one line; otherwise it prints a line every 10 s.
"""

from __future__ import annotations

import asyncio
import operator
import sys
from collections import deque
from typing import TextIO

import numpy as np

from loadgen.dispatch.runner import RunState
from metrics.records import RequestRecord


def clock(seconds: float) -> str:
    """A time left as people read it: 45s, 3m05s, 1h02m."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def completion(elapsed_s: float, *, duration_s: float | None, planned: int | None, done: int,
               in_flight: int) -> str:
    """`40% done, 1m30s left`. A run ends at its duration or its planned count, whichever comes first, so
    the share done is the larger of elapsed / duration and done / planned, and the time left the smaller of
    what remains of the duration and what the completion rate so far needs for the remaining requests.
    Once dispatching is over, the requests still in flight are what is left ("draining")."""
    shares, lefts = [], []
    if duration_s:
        shares.append(elapsed_s / duration_s)
        lefts.append(duration_s - elapsed_s)
    if planned:
        shares.append(done / planned)
        if done:
            lefts.append(elapsed_s * (planned - done) / done)
    if not shares:
        return ""
    share = min(1.0, max(shares))
    if share >= 1.0 or (lefts and min(lefts) <= 0):
        return f"100% dispatched, draining {in_flight} in flight" if in_flight else "100% done"
    left = f", {clock(min(lefts))} left" if lefts else ""
    return f"{share * 100:.0f}% done{left}"


class Progress:
    def __init__(self, state: RunState, *, duration_s: float | None, stream: TextIO | None = None,
                 window: int = 2000):
        self.state = state
        self.duration_s = duration_s
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self._ttft: deque[int] = deque(maxlen=window)
        self._itl: deque[int] = deque(maxlen=window * 8)

    def __call__(self, record: RequestRecord) -> None:
        """Record hook: keep the latest samples."""
        if record.status != "ok" or not record.chunk_ns or record.sent_ns is None:
            return
        chunks = record.chunk_ns
        self._ttft.append(chunks[0] - record.sent_ns)
        self._itl.extend(map(operator.sub, chunks[1:], chunks))  # each gap c[j+1] - c[j], without a generator

    @staticmethod
    def _p(samples: deque[int]) -> str:
        if not samples:
            return "-/-"
        p50, p99 = np.percentile(np.fromiter(samples, dtype=np.int64), [50, 99])
        return f"{p50 / 1e6:.1f}/{p99 / 1e6:.1f}ms"

    def line(self) -> str:
        st = self.state
        elapsed = st.elapsed_s()
        where = completion(elapsed, duration_s=self.duration_s, planned=st.planned, done=st.done,
                           in_flight=st.in_flight)
        return (f"dispatched {st.sent}  in-flight {st.in_flight}  done {st.done}  errors {st.errors}  "
                f"TTFT p50/p99 {self._p(self._ttft)}  ITL p50/p99 {self._p(self._itl)}  "
                f"{elapsed:.0f}s {where}").rstrip()

    async def loop(self) -> None:
        period = 0.5 if self.tty else 10.0
        try:
            while True:
                await asyncio.sleep(period)
                self.draw()
        except asyncio.CancelledError:
            self.draw(final=True)
            raise

    def draw(self, *, final: bool = False) -> None:
        if self.tty:
            self.stream.write("\r\x1b[2K" + self.line() + ("\n" if final else ""))
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()
