"""Continuous batching with a per-step token budget, chunked prefill and preemption by recompute.

Each step: running sequences first, in admission order, each taking its pending tokens (1 for a
decode, the rest of its prompt for a partly prefilled one) up to the remaining budget; then waiting
sequences are admitted while budget, sequence slots and KV blocks last. Any prefill may be cut into
chunks by the budget. When a running sequence cannot get a block, the most recently admitted running
sequence is preempted: its blocks are freed and it waits at the head of the queue to be recomputed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from refserver.engine.block_manager import BlockManager
from refserver.engine.runner_base import ScheduledBatch, ScheduledSeq
from refserver.engine.sequence import Sequence, SequenceStatus
from refserver.engine.types import QueueFullError


@dataclass(slots=True)
class SchedulerConfig:
    max_num_batched_tokens: int = 512  # token budget of one step (decode tokens + prefill chunks)
    max_num_seqs: int = 64  # running sequences at most
    max_waiting: int = 256  # waiting queue bound; past it add() raises QueueFullError

    def __post_init__(self) -> None:
        for name in ("max_num_batched_tokens", "max_num_seqs", "max_waiting"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")


class Scheduler:
    def __init__(self, config: SchedulerConfig, blocks: BlockManager) -> None:
        self.config = config
        self.blocks = blocks
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []
        self.num_preemptions = 0
        self.prefix_query_tokens = 0
        self.prefix_hit_tokens = 0
        # Waiting requests never scheduled yet. The queue bound counts only these, so that preempted
        # sequences going back to the queue can never make a request that was accepted overflow it.
        self.num_new_waiting = 0
        # Called with a victim before it is preempted (the virtual engine's fast decode brings it up to date).
        self.before_preempt: Callable[[Sequence], None] | None = None

    def add(self, seq: Sequence) -> None:
        if self.num_new_waiting >= self.config.max_waiting:
            raise QueueFullError(f"waiting queue is full ({self.config.max_waiting} requests)")
        self.waiting.append(seq)
        self.num_new_waiting += 1

    def has_unfinished(self) -> bool:
        return bool(self.waiting or self.running)

    def schedule(self, now_s: float) -> ScheduledBatch:
        batch = ScheduledBatch()
        budget = self.config.max_num_batched_tokens
        preemptions_before = self.num_preemptions
        i = 0
        while i < len(self.running) and budget > 0:
            seq = self.running[i]
            n = min(seq.num_pending_tokens, budget)
            if not self._make_room(seq, seq.num_computed_tokens + n):
                break  # seq itself was the last running one and went back to waiting
            batch.seqs.append(self._scheduled(seq, n))
            budget -= n
            i += 1
        self.admit(batch, budget, now_s, preempted=self.num_preemptions != preemptions_before)
        return batch

    def admit(self, batch: ScheduledBatch, budget: int, now_s: float, *, preempted: bool) -> None:
        """Admit waiting sequences into `batch` with what is left of the step's token budget."""
        # After a preemption the pool is tight: admitting more would only preempt again next step.
        while self.waiting and budget > 0 and len(self.running) < self.config.max_num_seqs and not preempted:
            seq = self.waiting[0]
            cached_ids, cached_hashes = self.blocks.find_cached_prefix(seq.token_ids)
            num_cached = len(cached_ids) * self.blocks.block_size
            n = min(seq.num_tokens - num_cached, budget)
            if not self.blocks.can_allocate(cached_ids, num_cached + n):
                break
            self.waiting.popleft()
            self.blocks.allocate(seq, cached_ids, cached_hashes, num_cached + n)
            self.prefix_query_tokens += seq.num_tokens
            self.prefix_hit_tokens += num_cached
            if seq.num_cached_tokens is None:
                seq.num_cached_tokens = num_cached
            if seq.scheduled_s is None:
                seq.scheduled_s = now_s
                self.num_new_waiting -= 1
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            batch.seqs.append(self._scheduled(seq, n))
            budget -= n

    def _scheduled(self, seq: Sequence, n: int) -> ScheduledSeq:
        start = seq.num_computed_tokens
        return ScheduledSeq(
            seq=seq,
            token_ids=seq.token_ids[start : start + n],
            start_pos=start,
            block_table=seq.block_table,
            sample=start + n == seq.num_tokens,
        )

    def _make_room(self, seq: Sequence, num_tokens: int) -> bool:
        """Grow seq to num_tokens, preempting from the back of `running`; False if seq itself was preempted."""
        while not self.blocks.grow(seq, num_tokens):
            victim = self.running.pop()
            self._preempt(victim)
            if victim is seq:
                return False
        return True

    def _preempt(self, seq: Sequence) -> None:
        if self.before_preempt is not None:
            self.before_preempt(seq)
        self.blocks.free(seq)
        seq.reset_for_recompute()
        self.waiting.appendleft(seq)
        self.num_preemptions += 1

    def finish(self, seq: Sequence) -> None:
        """Retire a finished or aborted sequence and release its blocks."""
        if seq.status is SequenceStatus.RUNNING:
            self.running.remove(seq)
            self.blocks.free(seq)
        elif seq.status is SequenceStatus.WAITING:
            self.waiting.remove(seq)
            if seq.scheduled_s is None:
                self.num_new_waiting -= 1
        seq.status = SequenceStatus.FINISHED
