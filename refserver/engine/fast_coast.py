"""The fast decode's coasting steps (refserver.engine.fast_decode): steps in which every running sequence is
quiet and none waiting can be admitted, run without `FastDecode.step`'s scheduling pass."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Protocol

from refserver.engine.block_manager import BlockManager
from refserver.engine.runner_base import ModelRunner, ScheduledBatch
from refserver.engine.scheduler import Scheduler
from refserver.engine.sequence import Sequence, SequenceStatus
from refserver.engine.types import FinishReason, RequestEvent, TokenEvent

# A quiet sequence's record (FastDecode.quiet): [next event step, anchor step, computed tokens at the anchor,
# first unreported step, finishing step].
NXT, T0, C0, R0, END = range(5)


class Engine(Protocol):
    """What the fast decode needs of the engine that owns it (refserver.engine.llm_engine.LLMEngine)."""

    scheduler: Scheduler
    block_manager: BlockManager
    runner: ModelRunner
    clock: Callable[[], float]
    overhead_s: float
    num_steps: int

    @property
    def eos_token_ids(self) -> tuple[int, ...]: ...

    @property
    def max_context(self) -> int: ...

    def _event(self, seq: Sequence, new_tokens: list[int], reason: FinishReason | None,
               now_s: float) -> TokenEvent: ...

    def _append(self, seq: Sequence, token: int, now_s: float) -> TokenEvent: ...


class Coasting(Protocol):
    """What `coast` reads and calls of its caller (refserver.engine.fast_decode.FastDecode), so that this
    module does not import it back."""

    engine: Engine
    token: int
    quiet: dict[Sequence, list[int]]
    due: defaultdict[int, list[Sequence]]
    ends: list[float]
    gaps: list[float]
    order: dict[Sequence, int]
    late: dict[Sequence, tuple[int, ...]]
    base_sum: int
    _events: list[RequestEvent]
    _takes: list[Sequence]
    _want: list[Sequence]

    def _take(self) -> None: ...

    def _plan(self, seq: Sequence, q: list[int]) -> None: ...

    def wake(self, seq: Sequence, t: int) -> None: ...

    def _go_quiet(self, seq: Sequence, t0: int) -> None: ...

    def _advance(self, seq: Sequence, q: list[int], t: int) -> None: ...

    def _planned(self, seq: Sequence, q: list[int]) -> None: ...

    def _settle(self) -> None: ...

    def _can_coast(self) -> bool: ...


def coast(fast: Coasting, until_s: float, events: list[RequestEvent]) -> None:
    """Steps of quiet decodes only, while nothing can change what a full step would do besides their own
    events: each step's blocks are taken and filled in running order as `step` would, sequences finish as
    its postprocessing would, and the runner gives its time. Stops before a step where the pool is short
    of a block (preemption), and after one where a sequence finished and a waiting one could be admitted."""
    eng = fast.engine
    blocks, quiet, due, ends, gaps, clock, order = \
        eng.block_manager, fast.quiet, fast.due, fast.ends, fast.gaps, eng.clock, fast.order
    bs, caching, token, late = blocks.block_size, blocks.enable_prefix_caching, fast.token, fast.late
    batch = ScheduledBatch()
    execute = eng.runner.execute
    fast._events = events
    t = start = len(ends)
    now = clock()
    while now < until_s:
        if fast._takes:
            fast._take()
        bucket = due.get(t)
        post: list[Sequence] = []
        finishing = False
        if bucket is not None:
            live = [s for s in (dict.fromkeys(bucket) if len(bucket) > 1 else bucket)
                    if (q := quiet.get(s)) is not None and q[NXT] == t]
            if len(live) > blocks.num_free_blocks:  # the pool may be short of a block: count those needed
                grows = 0
                for seq in live:
                    q = quiet[seq]
                    grows += q[C0] + t - q[T0] + 1 > len(seq.block_table) * bs
                if grows > blocks.num_free_blocks:
                    break
            del due[t]
            if len(live) > 1:
                live.sort(key=order.__getitem__)
            for seq in live:
                q = quiet[seq]
                c = q[C0] + t - q[T0]
                if c + 1 > len(seq.block_table) * bs:
                    blocks.append_block(seq)
                if q[END] == t:
                    post.append(seq)
                    finishing = True
                elif caching and (c + 1) // bs > len(seq.block_hashes) and seq not in late:
                    post.append(seq)
                else:
                    fast._plan(seq, q)
        decodes = len(quiet)
        batch.quiet_decodes, batch.quiet_kv = decodes, fast.base_sum + decodes * t
        execute(batch)
        now = clock()
        gaps.append(now - ends[-1])
        ends.append(now)
        for seq in post:  # in batch order, as step's postprocessing
            q = quiet[seq]
            if q[END] == t:  # as step: woken at its turn, one token computed, sampled, finished
                fast.wake(seq, t)
                seq.num_computed_tokens += 1
                blocks.cache_full_blocks(seq)
                events.append((seq.request_id, eng._append(seq, token, now)))
                if seq.status is SequenceStatus.RUNNING:
                    fast._go_quiet(seq, t + 1)
            else:
                fast._advance(seq, q, t + 1)
                blocks.cache_full_blocks(seq)
                fast._planned(seq, q)
        t += 1
        if fast._want:
            fast._settle()
        if finishing and not (eng.scheduler.has_unfinished() and fast._can_coast()):
            break
    eng.num_steps += t - start
