"""The synchronous engine: an explicit step() loop of schedule → run → postprocess → events."""

from __future__ import annotations

import time
from collections.abc import Callable

from refserver.engine.block_manager import BlockManager, HashFn, chain_hash
from refserver.engine.config import EngineConfig
from refserver.engine.fast_decode import FastDecode
from refserver.engine.runner_base import ModelRunner
from refserver.engine.scheduler import Scheduler, SchedulerConfig
from refserver.engine.sequence import Sequence
from refserver.engine.step_log import StepLog
from refserver.engine.types import EngineStats, FinishReason, RequestEvent, SamplingParams, TokenEvent
from refserver.model import max_positions


def validate_request(
    prompt: list[int], params: SamplingParams, *, vocab_size: int | None, max_context: int
) -> None:
    """Raise ValueError with a clear message for a request the engine cannot serve (`vocab_size` None: any
    token id is one)."""
    if not prompt:
        raise ValueError("prompt must contain at least one token")
    if len(prompt) >= max_context:
        raise ValueError(f"prompt has {len(prompt)} tokens; the context holds {max_context} (prompt + output)")
    if vocab_size is not None and not (min(prompt) >= 0 and max(prompt) < vocab_size):
        bad = next(t for t in prompt if not 0 <= t < vocab_size)
        raise ValueError(f"token id {bad} is outside the vocabulary [0, {vocab_size})")
    if params.max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got {params.max_tokens}")
    if not 0 <= params.min_tokens <= params.max_tokens:
        raise ValueError(f"min_tokens must be in [0, max_tokens], got {params.min_tokens}")
    if params.temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {params.temperature}")
    if not 0 < params.top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {params.top_p}")
    if params.top_k < -1:
        raise ValueError(f"top_k must be -1, 0 (off) or positive, got {params.top_k}")


class LLMEngine:
    def __init__(self, runner: ModelRunner, config: EngineConfig, *, hash_fn: HashFn = chain_hash,
                 clock: Callable[[], float] = time.perf_counter, fast_decode: bool = False,
                 check_vocab: bool = True) -> None:
        self.runner = runner
        # Seconds of the engine's clock: the wall clock, or a virtual one the runner advances (loadgen.predict).
        self.clock = clock
        self.config = config
        self.model_config = runner.model_config
        self.block_manager = BlockManager(
            runner.num_blocks, config.block_size, enable_prefix_caching=config.enable_prefix_caching, hash_fn=hash_fn
        )
        self.scheduler = Scheduler(
            SchedulerConfig(config.max_num_batched_tokens, config.max_num_seqs, config.max_waiting), self.block_manager
        )
        self.seqs: dict[str, Sequence] = {}
        # Whether a prompt's token ids must be in the model's vocabulary: not for a runner that has none (the
        # virtual engine of loadgen.predict only hashes them, and its prompts' ids are made from text).
        self._check_vocab = check_vocab
        self.overhead_s = 0.0  # cumulative schedule + postprocess time (everything but runner.execute)
        self.num_steps = 0
        self.step_log: StepLog | None = None  # each step's work and time, when set (GET /v1/goodput/steps)
        self.num_finished: dict[FinishReason, int] = {}  # cumulative, by finish reason
        pool = self.block_manager.num_total_blocks * self.block_manager.block_size
        # Prompt + output tokens one request may reach: model positions, capped by the KV pool.
        self._max_context = min(max_positions(self.model_config), pool)
        # Decode steps without per-sequence bookkeeping (refserver.engine.fast_decode): only for a runner
        # that always samples the same token (`constant_token`), i.e. the virtual engine of loadgen.predict.
        self.fast: FastDecode | None = None
        if fast_decode:
            token = getattr(runner, "constant_token", None)
            if not isinstance(token, int):
                raise ValueError("fast_decode needs a runner that samples a constant token (constant_token)")
            self.fast = FastDecode(self, token)

    @property
    def vocab_size(self) -> int:
        return self.model_config.vocab_size

    @property
    def eos_token_id(self) -> int | None:
        return self.model_config.eos_token_id

    @property
    def eos_token_ids(self) -> tuple[int, ...]:
        return self.model_config.eos_token_ids

    @property
    def max_context(self) -> int:
        return self._max_context

    def validate(self, prompt: list[int], params: SamplingParams) -> None:
        validate_request(prompt, params, vocab_size=self.vocab_size if self._check_vocab else None,
                         max_context=self.max_context)

    def add_request(
        self, request_id: str, prompt: list[int], params: SamplingParams, arrival_s: float | None = None
    ) -> None:
        """Queue a request (validated here too); raises QueueFullError when the waiting queue is full."""
        if request_id in self.seqs:
            raise ValueError(f"request id {request_id!r} is already in the engine")
        self.validate(prompt, params)
        seq = Sequence.new(request_id, prompt, params, self.clock() if arrival_s is None else arrival_s)
        self.scheduler.add(seq)
        self.seqs[request_id] = seq
        if self.fast is not None:
            self.fast.added(seq)

    def abort(self, request_id: str) -> TokenEvent | None:
        """Finish a live request as "abort" and free its blocks; None when the id is unknown or done."""
        seq = self.seqs.get(request_id)
        if seq is None:
            return None
        if self.fast is not None:
            self.fast.flush()
        return self._finish(seq, "abort", [], self.clock())

    def abort_all(self, reason: FinishReason) -> list[RequestEvent]:
        now = self.clock()
        if self.fast is not None:
            self.fast.flush()
        return [(rid, self._finish(seq, reason, [], now)) for rid, seq in list(self.seqs.items())]

    def has_unfinished(self) -> bool:
        return self.scheduler.has_unfinished()

    def step(self) -> list[RequestEvent]:
        """Run one engine step; events for every request that produced a token or finished."""
        if self.fast is not None:
            return self.fast.step()
        t0 = self.clock()
        batch = self.scheduler.schedule(t0)
        if not batch.seqs:
            return []
        t1 = self.clock()
        tokens = self.runner.execute(batch)
        t2 = self.clock()
        events: list[RequestEvent] = []
        sampled = iter(tokens)
        for item in batch.seqs:
            seq = item.seq
            seq.num_computed_tokens += len(item.token_ids)
            self.block_manager.cache_full_blocks(seq)
            if item.sample:
                events.append((seq.request_id, self._append(seq, next(sampled), t2)))
        self.num_steps += 1
        t3 = self.clock()
        self.overhead_s += (t1 - t0) + (t3 - t2)
        if self.step_log is not None:
            self.step_log.record(batch, t0, t3, busy=self.has_unfinished())
        return events

    def run_until(self, until_s: float) -> list[RequestEvent]:
        """Steps while the clock is before `until_s` (at least one), for a clock that only steps advance (the
        virtual one of loadgen.predict); stops early at a step that leaves the clock where it was (nothing to
        schedule) or when nothing is left to run. The events of every step, in order."""
        if self.fast is not None:
            return self.fast.run_until(until_s)
        events: list[RequestEvent] = []
        while True:
            before = self.clock()
            events += self.step()
            now = self.clock()
            if now == before or now >= until_s or not self.has_unfinished():
                return events

    def _append(self, seq: Sequence, token: int, now_s: float) -> TokenEvent:
        seq.append_token(token)
        if seq.first_token_s is None:
            seq.first_token_s = now_s
        p = seq.params
        reason: FinishReason | None = None
        if token in p.stop_token_ids or (not p.ignore_eos and token in self.eos_token_ids):
            reason = "stop"
        elif seq.num_output_tokens >= p.max_tokens or seq.num_tokens >= self.max_context:
            reason = "length"
        if reason is not None:
            return self._finish(seq, reason, [token], now_s)
        return self._event(seq, [token], None, now_s)

    def _finish(self, seq: Sequence, reason: FinishReason, new_tokens: list[int], now_s: float) -> TokenEvent:
        self.scheduler.finish(seq)
        seq.finish_reason = reason
        del self.seqs[seq.request_id]
        self.num_finished[reason] = self.num_finished.get(reason, 0) + 1
        return self._event(seq, new_tokens, reason, now_s)

    def _event(self, seq: Sequence, new_tokens: list[int], reason: FinishReason | None, now_s: float) -> TokenEvent:
        return TokenEvent(
            new_token_ids=new_tokens,
            finished=reason is not None,
            finish_reason=reason,
            num_prompt_tokens=seq.num_prompt_tokens,
            num_cached_tokens=seq.num_cached_tokens or 0,
            arrival_s=seq.arrival_s,
            scheduled_s=seq.scheduled_s,
            first_token_s=seq.first_token_s,
            now_s=now_s,
        )

    def stats(self) -> EngineStats:
        bm, sched = self.block_manager, self.scheduler
        return EngineStats(
            num_running=len(sched.running),
            num_waiting=len(sched.waiting),
            kv_usage=bm.usage(),
            num_free_blocks=bm.num_free_blocks,
            num_total_blocks=bm.num_total_blocks,
            prefix_queries_tokens=sched.prefix_query_tokens,
            prefix_hit_tokens=sched.prefix_hit_tokens,
            num_preemptions=sched.num_preemptions,
            block_size=bm.block_size,
            prefix_caching=bm.enable_prefix_caching,
        )
