"""The reference engine in virtual time: the real `LLMEngine` (scheduler, KV blocks, prefix cache) with a
runner that advances a virtual clock by the step model's duration instead of computing anything.

`simulate` feeds requests at their scheduled offsets: a request that arrives while a step runs joins
the next step, as on the server; an idle engine jumps to the next arrival. Nothing sleeps and nothing
is sent, so a run of thousands of requests takes as long as the scheduler's own bookkeeping.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from loadgen.predict.step_model import StepModel
from metrics import gc_paused
from metrics.model import ModelConfig
from refserver.engine import EngineConfig, LLMEngine, SamplingParams, ScheduledBatch, batch_work
from refserver.model import tiny_config

FloatArray = npt.NDArray[np.float64]
VOCAB = 1 << 24  # what the virtual model reports; its prompts' ids are not checked against it (check_vocab)
OUTPUT_TOKEN = 1  # what every virtual step "samples": never eos (requests ask for ignore_eos)


class VirtualClock:
    __slots__ = ("t",)

    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t


class ModelStepRunner:
    """A `ModelRunner` whose step takes the step model's time on the virtual clock."""

    constant_token = OUTPUT_TOKEN  # what every step samples: lets the engine run decodes fast (fast_decode)

    def __init__(self, model: StepModel, clock: VirtualClock, *, max_positions: int) -> None:
        self.model = model
        self.clock = clock
        self.steps = 0
        self.busy_s = 0.0
        self._config: ModelConfig = dataclasses.replace(tiny_config(), vocab_size=VOCAB,
                                                        max_position_embeddings=max_positions)

    @property
    def model_config(self) -> ModelConfig:
        return self._config

    @property
    def num_blocks(self) -> int:
        return self.model.limits.num_blocks

    def execute(self, batch: ScheduledBatch) -> list[int]:
        if batch.seqs:
            prefill, prefill_ctx, decode, kv, samples = batch_work(batch)
            duration = self.model.seconds(prefill, prefill_ctx, decode, kv)
        else:  # quiet decodes only (refserver.engine.fast_decode)
            duration, samples = self.model.seconds(0, 0.0, batch.quiet_decodes, batch.quiet_kv), 0
        self.clock.t += duration
        self.busy_s += duration
        self.steps += 1
        return [OUTPUT_TOKEN] * samples


@dataclass(frozen=True, slots=True)
class Outcome:
    """Per request, in input order (seconds from its arrival); NaN where it does not apply."""

    ttft_s: FloatArray
    e2e_s: FloatArray
    tpot_s: FloatArray  # (E2E − TTFT) / (N − 1), N ≥ 2
    max_itl_s: FloatArray  # the longest gap between two tokens, N ≥ 2
    output_tokens: npt.NDArray[np.int64]
    duration_s: float  # first arrival → last finish (virtual)
    steps: int
    preemptions: int


def make_engine(model: StepModel, *, max_positions: int, waiting: int,
                fast: bool = False) -> tuple[LLMEngine, ModelStepRunner]:
    clock = VirtualClock()
    runner = ModelStepRunner(model, clock, max_positions=max_positions)
    lim = model.limits
    config = EngineConfig(block_size=lim.block_size, num_blocks=lim.num_blocks,
                          max_num_batched_tokens=lim.max_num_batched_tokens, max_num_seqs=lim.max_num_seqs,
                          max_waiting=max(1, waiting), enable_prefix_caching=lim.enable_prefix_caching)
    return LLMEngine(runner, config, clock=clock.now, fast_decode=fast, check_vocab=False), runner


Routing = Literal["round-robin", "least-loaded"]


def route(engines: list[LLMEngine], index: int, routing: Routing) -> int:
    """Which replica request `index` goes to: in turn, or the one holding the fewest unfinished requests
    (the first of equals). A replica's state is its state at the end of its current step."""
    if routing == "round-robin":
        return index % len(engines)
    loads = [len(e.seqs) for e in engines]
    return loads.index(min(loads))


def simulate(model: StepModel, prompts: list[list[int]], max_tokens: list[int], offsets: FloatArray, *,
             replicas: int = 1, routing: Routing = "round-robin", fast: bool = True) -> Outcome:
    """Run every request through `replicas` engines in virtual time, each request routed at its arrival;
    ValueError for a request an engine cannot hold. `fast` runs decodes without per-sequence bookkeeping
    (refserver.engine.fast_decode; the same outcomes), False runs every sequence's every step."""
    with gc_paused():  # its objects are all freed by reference counts (metrics.collector)
        return _simulate(model, prompts, max_tokens, offsets, replicas=replicas, routing=routing, fast=fast)


def _simulate(model: StepModel, prompts: list[list[int]], max_tokens: list[int], offsets: FloatArray, *,
              replicas: int, routing: Routing, fast: bool) -> Outcome:
    n = len(prompts)
    longest = max((len(p) + m for p, m in zip(prompts, max_tokens, strict=True)), default=1)
    pool = model.limits.num_blocks * model.limits.block_size
    if longest > pool:
        raise ValueError(f"a request of {longest} tokens does not fit the model's KV pool of {pool} tokens")
    if replicas < 1:
        raise ValueError(f"replicas must be >= 1, got {replicas}")
    pairs = [make_engine(model, max_positions=longest + 1, waiting=n, fast=fast) for _ in range(replicas)]
    engines, clocks = [e for e, _ in pairs], [r.clock for _, r in pairs]
    arrival = np.asarray(offsets, dtype=np.float64)
    at = arrival.tolist()  # the same floats; a list's items cost less to read than numpy scalars
    nan = math.nan  # plain lists in the loop: numpy scalar access costs more than the bookkeeping itself
    first, done, last, max_itl = [nan] * n, [nan] * n, [nan] * n, [nan] * n
    out = [0] * n
    params_of: dict[int, SamplingParams] = {}  # one per output length: the engine only reads them
    i = 0
    while True:
        busy = [e for e in range(replicas) if engines[e].has_unfinished()]
        now = min([clocks[e].t for e in busy]) if busy else math.inf
        if i < n and at[i] <= now:  # route every arrival up to the earliest step end first
            e = route(engines, i, routing)
            clock = clocks[e]
            if not engines[e].has_unfinished():
                clock.t = max(clock.t, at[i])
            params = params_of.get(max_tokens[i])
            if params is None:
                params = params_of[max_tokens[i]] = SamplingParams(max_tokens=max_tokens[i], ignore_eos=True,
                                                                   temperature=0.0)
            engines[e].add_request(str(i), prompts[i], params, arrival_s=at[i])
            i += 1
            continue
        if not busy:
            break
        e = min(busy, key=lambda b: clocks[b].t)
        clock = clocks[e]
        before = clock.t
        # Its steps up to the next arrival: no other replica's step changes this one's (routing reads each
        # replica's state once every step it began before the arrival is done, as stepping in turn would).
        for rid, event in engines[e].run_until(at[i] if i < n else math.inf):
            k, t = int(rid), event.now_s
            count = out[k] = out[k] + len(event.new_token_ids)
            gap = event.gap_max_s  # several tokens, one per step (fast decode): their longest gap
            if gap is not None:
                if not gap <= max_itl[k]:
                    max_itl[k] = gap
            elif count == 1:
                first[k] = t
            elif not t - last[k] <= max_itl[k]:  # NaN-safe: the first gap sets it
                max_itl[k] = t - last[k]
            last[k] = t
            if event.finished:
                done[k] = t
        if clock.t == before:  # nothing could be scheduled: wait for the next arrival
            if i >= n:
                raise RuntimeError("the engine holds requests it can never schedule")
            clock.t = max(clock.t, at[i])
    tokens = np.array(out, dtype=np.int64)
    ttft, e2e = np.array(first) - arrival, np.array(done) - arrival
    with np.errstate(invalid="ignore", divide="ignore"):
        tpot = np.where(tokens >= 2, (e2e - ttft) / np.maximum(tokens - 1, 1), np.nan)
    span = float(np.nanmax(done) - arrival[0]) if n else 0.0
    return Outcome(ttft, e2e, tpot, np.array(max_itl), tokens, span, sum(r.steps for _, r in pairs),
                   sum(e.scheduler.num_preemptions for e in engines))
