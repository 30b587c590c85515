"""Decode steps without per-sequence bookkeeping, for a runner that always samples one constant token (the
virtual engine of loadgen.predict, which predicts times, not text).

A running sequence that is decoding (one pending token) goes *quiet*: its token list and computed count are
not updated each step but held as an anchor (the step it went quiet, its computed tokens then), from which
its state at any later step follows. Each step walks `running` in order, as `Scheduler.schedule` does, and
for a quiet sequence only counts its token and KV read, unless the step is one of its events:

- it needs a KV block: `Scheduler._make_room`, as in the step-by-step path (preemption included);
- a block of it fills (prefix caching): it is brought up to date after the step and
  `BlockManager.cache_full_blocks` registers the block, at its place in batch order;
- it finishes (max tokens or the context), or a budget short of it, or a preemption takes it: it is brought up
  to date and handled by the ordinary code from that step on.

With prefix caching a quiet sequence needs a block in the step right after one fills. Where nothing else can
take a block before it in that step (every running sequence quiet, the budget holding them all, a free block
for each), it takes it first thing in that step, without an event of its own (`_settle`, `_take`). After a
step that leaves every running sequence quiet and none waiting admissible, the next steps *coast*
(refserver.engine.fast_coast): only the quiet sequences' events are visited, finishes included. A quiet
sequence that no other request can meet in the prefix cache registers its filled blocks when it wakes, in
one call, and has no event for a block filling, only for needing one (refserver.engine.fast_late).

Every other rule is the scheduler's own code (`admit`, `_make_room`, `_scheduled`) and the engine's own
postprocessing, so a step's batch, block allocations, prefix cache, preemptions and the runner's step time are
those of the step-by-step engine. The tokens of a quiet stretch are reported when it ends, as one event whose
`gap_max_s` is the longest gap before or between them (each step's end is kept). tests/predict/test_fast_decode.py
proves the outcomes equal to the step-by-step engine's, tests/predict/test_fast_decode_state.py its state
between runs.
"""

from __future__ import annotations

from collections import defaultdict

from refserver.engine.block_manager import chain_hash
from refserver.engine.fast_coast import C0, END, NXT, R0, T0, Engine, coast
from refserver.engine.fast_late import LateRegistration
from refserver.engine.runner_base import ScheduledBatch, ScheduledSeq
from refserver.engine.sequence import Sequence, SequenceStatus
from refserver.engine.types import RequestEvent


class FastDecode:
    def __init__(self, engine: Engine, token: int) -> None:
        self.engine = engine
        self.token = token
        self.quiet: dict[Sequence, list[int]] = {}
        self.ends: list[float] = []  # the engine clock at the end of each step
        self.gaps: list[float] = []  # ends[t] - ends[t - 1] (0 for the first step)
        self._events: list[RequestEvent] = []
        self._t = 0
        self._bs, self._caching = engine.block_manager.block_size, engine.block_manager.enable_prefix_caching
        self.due: defaultdict[int, list[Sequence]] = defaultdict(list)  # step -> quiet sequences with an event
        # then (some stale: woken or planned again since)
        self.base_sum = 0  # Σ (computed tokens − step + 1) at the anchor of the quiet: their KV read is this + count × step
        self.order: dict[Sequence, int] = {}  # when each running sequence joined `running` (its place there)
        self._admitted = 0
        # Quiet sequences whose table is full after this step (they need a block at the next): `_want` while
        # the step is post-processed, then `_takes` when they take it first thing next step (`_settle`).
        self._want: list[Sequence] = []
        self._takes: list[Sequence] = []
        # Quiet sequences that register their filled blocks when they wake (refserver.engine.fast_late).
        bm = engine.block_manager
        self.registry = LateRegistration(self._bs, token, enabled=self._caching and bm.hash_fn is chain_hash)
        self.late = self.registry.late
        engine.scheduler.before_preempt = self._wake_victim

    def _advance(self, seq: Sequence, q: list[int], t: int) -> None:
        """Bring seq's token list and computed count to their values at the start of step t; anchor it there."""
        k = t - q[T0]
        if k:
            seq.num_computed_tokens = q[C0] + k
            seq.token_ids.extend([self.token] * k)
            q[T0], q[C0] = t, q[C0] + k

    def wake(self, seq: Sequence, t: int) -> None:
        """seq leaves the quiet set at the start of step t: up to date, its unreported tokens reported."""
        q = self.quiet.pop(seq)
        self.base_sum -= q[C0] - q[T0] + 1
        self._advance(seq, q, t)
        if self.registry.woken(seq):
            self.engine.block_manager.cache_full_blocks(seq)
        r0 = q[R0]
        if t > r0:
            event = self.engine._event(seq, [self.token] * (t - r0), None, self.ends[t - 1])
            gap = max(self.gaps[r0:t])
            event.gap_max_s = gap
            self._events.append((seq.request_id, event))

    def _wake_victim(self, seq: Sequence) -> None:
        self.registry.preempted(seq)
        if seq in self.quiet:
            self.wake(seq, self._t)

    def added(self, seq: Sequence) -> None:
        """A request joined the engine (between steps): a late sequence with its first block registers now."""
        other = self.registry.added(seq)
        if other is not None:
            q = self.quiet[other]
            self._advance(other, q, len(self.ends))
            self.engine.block_manager.cache_full_blocks(other)
            self._plan(other, q)

    def flush(self) -> list[RequestEvent]:
        """Wake every quiet sequence (their state up to date); the events of their unreported tokens."""
        self._events = []
        self._takes = []  # not taken yet: the state is the step-by-step engine's at the end of the last step
        for seq in list(self.quiet):
            self.wake(seq, len(self.ends))
        return self._events

    def _plan(self, seq: Sequence, q: list[int]) -> None:
        """The next step at which the quiet seq needs a block, fills a block (prefix caching) or finishes."""
        t0, c0, bs = q[T0], q[C0], self._bs
        nxt = t0 + len(seq.block_table) * bs - c0  # its first step with c0 + (s - t0) + 1 > the table's tokens
        if self._caching and seq not in self.late:
            # its first step after which (c0 + (s - t0) + 1) // bs exceeds the blocks hashed (a late one's fills
            # are no events: it registers them when it wakes)
            fill = t0 + (len(seq.block_hashes) + 1) * bs - c0 - 1
            if fill < nxt:
                nxt = fill
        if nxt < t0:
            nxt = t0
        if q[END] < nxt:
            nxt = q[END]
        q[NXT] = nxt
        self.due[nxt].append(seq)

    def _go_quiet(self, seq: Sequence, t0: int) -> None:
        eng, p, c0 = self.engine, seq.params, seq.num_computed_tokens
        if self.token in p.stop_token_ids or (not p.ignore_eos and self.token in eng.eos_token_ids):
            end = t0
        else:  # after step s it holds c0 + (s - t0) + 2 tokens
            end = t0 + min(seq.num_prompt_tokens + p.max_tokens, eng.max_context) - c0 - 2
        q = [0, t0, c0, t0, end]
        self.quiet[seq] = q
        self.registry.defer(seq)
        self.base_sum += c0 - t0 + 1
        self._planned(seq, q)

    def _planned(self, seq: Sequence, q: list[int]) -> None:
        """After seq's state changed at the end of a step: `_want` if its table is full (prefix caching: then
        its next step needs a block, and `_settle` decides how it gets it), else `_plan`."""
        if self._caching and q[C0] == len(seq.block_table) * self._bs and seq not in self.late:
            self._want.append(seq)
        else:
            self._plan(seq, q)

    def _settle(self) -> None:
        """At the end of a step: the quiet sequences that need a block at the next step (`_want`: with prefix
        caching, every one that does but those registering late) take it first thing then (`_take`), in running
        order, instead of at their turn, where that is what the next step does: every running sequence is quiet
        and the budget holds them all (no other sequence takes a block before the admissions, which come after),
        no late one has an event then (it may take a block at its turn, before theirs), and the pool holds a
        block for each (no preemption). Else each is planned for that step, as an event."""
        want, self._want = self._want, []
        sched = self.engine.scheduler
        decodes = len(self.quiet)
        due = self.due.get(len(self.ends))  # a late sequence there may take a block first, at its turn
        if len(sched.running) == decodes and decodes <= sched.config.max_num_batched_tokens \
                and len(want) <= self.engine.block_manager.num_free_blocks \
                and (due is None or not any(s in self.late for s in due)):
            if len(want) > 1:
                want.sort(key=self.order.__getitem__)
            self._takes = want
        else:
            for seq in want:
                self._plan(seq, self.quiet[seq])

    def _take(self) -> None:
        """The start of a step: the blocks `_settle` decided on, then each sequence's next event planned."""
        takes, quiet, append = self._takes, self.quiet, self.engine.block_manager.append_block
        self._takes = []
        for seq in takes:
            append(seq)
            self._plan(seq, quiet[seq])

    def run_until(self, until_s: float) -> list[RequestEvent]:
        """LLMEngine.run_until. After a step that leaves every running sequence quiet and none admissible,
        the next steps coast (`_coast`) until one of them finishes and another could be admitted, or the clock
        reaches `until_s`."""
        eng = self.engine
        events: list[RequestEvent] = []
        while True:
            before = eng.clock()
            events += self.step()
            now = eng.clock()
            if now == before or now >= until_s or not eng.scheduler.has_unfinished():
                return events
            if self._can_coast():
                self._coast(until_s, events)
                if eng.clock() >= until_s or not eng.scheduler.has_unfinished():
                    return events

    def _can_coast(self) -> bool:
        """Every running sequence is quiet, the budget holds them all, and no waiting one can be admitted
        whatever the KV pool holds (none waits, the sequence slots are full, or the budget is)."""
        sched = self.engine.scheduler
        cfg, decodes = sched.config, len(self.quiet)
        return len(sched.running) == decodes and decodes <= cfg.max_num_batched_tokens and (
            not sched.waiting or decodes >= cfg.max_num_seqs or decodes >= cfg.max_num_batched_tokens)

    def _coast(self, until_s: float, events: list[RequestEvent]) -> None:
        coast(self, until_s, events)

    def step(self) -> list[RequestEvent]:
        """One engine step (LLMEngine.step's contract)."""
        eng = self.engine
        sched, blocks, quiet = eng.scheduler, eng.block_manager, self.quiet
        t = self._t = len(self.ends)
        events: list[RequestEvent] = []
        self._events = events
        t0_clock = eng.clock()
        if self._takes:
            self._take()
        batch = ScheduledBatch()
        post: list[ScheduledSeq | Sequence] = []  # batch order: scheduled items, quiet ones filling a block
        preemptions_before = sched.num_preemptions
        due = self.due.pop(t, None)
        running = sched.running
        awake = [s for s in running if s not in quiet] if len(running) > len(quiet) else []
        budget = sched.config.max_num_batched_tokens
        if len(quiet) + (sum(s.num_pending_tokens for s in awake) if awake else 0) <= budget:
            # No running sequence is cut short by the budget: only those with something to do are visited.
            if due is not None:
                awake.extend(dict.fromkeys([s for s in due if (q := quiet.get(s)) is not None and q[NXT] == t]))
                awake.sort(key=self.order.__getitem__)
            budget -= self._visit(awake, t, batch, post, budget) if awake else 0
        else:
            budget -= self._visit(running, t, batch, post, budget)
        decodes = len(quiet)
        scheduled = len(batch.seqs)
        sched.admit(batch, budget - decodes, t0_clock, preempted=sched.num_preemptions != preemptions_before)
        for item in batch.seqs[scheduled:]:
            self.order[item.seq] = self._admitted
            self._admitted += 1
            post.append(item)
        if len(self.order) > 2 * len(running) + 64:  # forget finished sequences: only running ones are sorted
            self.order = {s: self.order[s] for s in running}
        if not batch.seqs and not decodes:
            return events
        batch.quiet_decodes, batch.quiet_kv = decodes, self.base_sum + decodes * t
        t1 = eng.clock()
        sampled = iter(eng.runner.execute(batch))
        t2 = eng.clock()
        self.gaps.append(t2 - self.ends[-1] if self.ends else 0.0)
        self.ends.append(t2)
        for entry in post:
            if isinstance(entry, ScheduledSeq):
                seq = entry.seq
                seq.num_computed_tokens += len(entry.token_ids)
                blocks.cache_full_blocks(seq)
                if entry.sample:
                    events.append((seq.request_id, eng._append(seq, next(sampled), t2)))
            else:
                q = quiet[entry]
                self._advance(entry, q, t + 1)
                blocks.cache_full_blocks(entry)
                self._planned(entry, q)
        for item in batch.seqs:
            seq = item.seq
            if item.sample and seq.status is SequenceStatus.RUNNING and seq.num_pending_tokens == 1:
                self._go_quiet(seq, t + 1)
        if self._want:
            self._settle()
        eng.num_steps += 1
        eng.overhead_s += (t1 - t0_clock) + (eng.clock() - t2)
        return events

    def _visit(self, seqs: list[Sequence], t: int, batch: ScheduledBatch, post: list[ScheduledSeq | Sequence],
               budget: int) -> int:
        """Schedule `seqs` (running order) as Scheduler.schedule's loop does, quiet ones only where step t is
        one of their events; those the budget does not reach are woken. Either `seqs` is all of `running`, or
        the budget holds every running sequence's tokens (then the quiet ones not visited need not count).
        The tokens given to sequences awake (quiet ones are not counted)."""
        sched, quiet, bs, caching = self.engine.scheduler, self.quiet, self._bs, self._caching
        left = budget
        used = i = 0
        while i < len(seqs):
            seq = seqs[i]
            i += 1
            if seq.status is not SequenceStatus.RUNNING:
                continue  # preempted by an earlier one's growth (only in a visit of some of `running`)
            if left <= 0:  # the rest get no step: they are up to date as of now
                for rest in seqs[i - 1 :]:
                    if rest in quiet:
                        self.wake(rest, t)
                break
            q = quiet.get(seq)
            if q is not None and q[NXT] == t:
                if q[END] == t:
                    self.wake(seq, t)
                    q = None
                else:
                    c = q[C0] + t - q[T0]
                    if c + 1 > len(seq.block_table) * bs and not sched._make_room(seq, c + 1):
                        break  # seq itself was preempted (and woken first)
                    if caching and (c + 1) // bs > len(seq.block_hashes) and seq not in self.late:
                        post.append(seq)
                    else:
                        self._plan(seq, q)
            if q is None:
                n = min(seq.num_pending_tokens, left)
                if not sched._make_room(seq, seq.num_computed_tokens + n):
                    break
                item = sched._scheduled(seq, n)
                batch.seqs.append(item)
                post.append(item)
                left -= n
                used += n
            else:
                left -= 1
        return used
