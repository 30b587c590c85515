"""A bounded record of the engine's recent steps, for `goodput calibrate` (GET /v1/goodput/steps).

Each record is one engine step as the scheduler made it and the clock timed it: its start and duration
(schedule, model run and postprocessing: seconds of the engine's clock), `lead_s` the time since the
previous step ended when that step left work to do (the engine loop's own time between two busy steps:
taking new requests, handing events over, waiting for the interpreter; null after an idle spell, when
the engine waited for requests), and what it computed, in the
step model's terms (loadgen.predict.step_model): P prefill tokens, PC Σ chunk tokens × context after the
chunk, D decoding sequences, K Σ of their contexts. A scheduled item of one token is a decode (as the
predictor counts it: loadgen.predict.virtual runs the same `batch_work`). The ring keeps the last `capacity` steps;
each has a sequence number, so a reader asks for those after the last it has and learns how many it
missed (`dropped`) when it asked too rarely.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from typing import TypedDict

from refserver.engine.runner_base import ScheduledBatch

DEFAULT_CAPACITY = 8192
FIELDS = ("seq", "start_s", "duration_s", "lead_s", "prefill_tokens", "prefill_ctx", "decode_seqs", "kv_tokens")


@dataclass(frozen=True, slots=True)
class StepRecord:
    seq: int  # 1, 2, ... in step order
    start_s: float
    duration_s: float
    lead_s: float | None
    prefill_tokens: int
    prefill_ctx: float
    decode_seqs: int
    kv_tokens: int

    def row(self) -> list[float | None]:
        """The record as a JSON row in FIELDS order."""
        lead = None if self.lead_s is None else round(self.lead_s, 9)
        return [self.seq, round(self.start_s, 6), round(self.duration_s, 9), lead, self.prefill_tokens,
                self.prefill_ctx, self.decode_seqs, self.kv_tokens]


class StepsBody(TypedDict):
    """GET /v1/goodput/steps: the steps after `after`, oldest first, as rows in `fields` order."""

    fields: list[str]
    steps: list[list[float | None]]
    last: int  # the newest step's seq (0 before the first step): the next `after`
    dropped: int  # steps after `after` the ring no longer holds


def batch_work(batch: ScheduledBatch) -> tuple[int, float, int, int, int]:
    """P, PC, D and K of a scheduled batch (loadgen.predict.step_model), and the tokens it samples."""
    prefill, decode, kv = 0, batch.quiet_decodes, batch.quiet_kv
    prefill_ctx = 0.0
    samples = 0
    for s in batch.seqs:
        n = len(s.token_ids)
        ctx = s.start_pos + n
        if n > 1:
            prefill += n
            prefill_ctx += n * ctx
        else:
            decode += 1
            kv += ctx
        samples += s.sample
    return prefill, prefill_ctx, decode, kv, samples


class StepLog:
    """The ring; `record` runs on the engine's thread, `after` on the server's (a lock between them)."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError(f"step log capacity must be >= 1, got {capacity}")
        self._ring: deque[StepRecord] = deque(maxlen=capacity)
        self._lock = threading.Lock()
        self._seq = 0
        self._busy_end: float | None = None  # the previous step's end, when it left work to do

    def record(self, batch: ScheduledBatch, start_s: float, end_s: float, *, busy: bool = False) -> None:
        """One step; `busy`: the engine has unfinished requests after it (the next step's lead is timed)."""
        p, pc, d, k, _ = batch_work(batch)
        lead = None if self._busy_end is None else start_s - self._busy_end
        self._busy_end = end_s if busy else None
        with self._lock:
            self._seq += 1
            self._ring.append(StepRecord(self._seq, start_s, end_s - start_s, lead, p, pc, d, k))

    def after(self, seq: int) -> StepsBody:
        with self._lock:
            kept = [r for r in self._ring if r.seq > seq] if self._ring and self._ring[-1].seq > seq else []
            last = self._seq
        first = kept[0].seq if kept else last + 1
        return {"fields": list(FIELDS), "steps": [r.row() for r in kept], "last": last,
                "dropped": max(0, first - max(seq, 0) - 1)}
