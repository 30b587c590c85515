"""The `sim` model runner: the real scheduler and KV block manager, with a roofline clock instead of a model.

Each step lasts what the roofline model (`metrics.model.roofline`) says that step's batch would take
on the chosen GPU — decode tokens and prefill chunks with their real context lengths — divided by an
efficiency (the fraction of peak FLOP/s and bandwidth real kernels reach), plus a fixed per-step
overhead (launches, sampling, scheduling on a real server). The runner then waits until that step's
absolute deadline on the wall clock. While the engine is busy (the batch carries a sequence over from
the last step) deadlines chain, `deadline_k = deadline_{k-1} + duration_k`, so sleep overshoot and the
engine's own bookkeeping between steps are made up instead of accumulating; a batch of newcomers,
which may follow idleness, starts from now. Tokens are deterministic printable filler
(byte ids of a fixed text), never eos unless `eos_after_tokens` asks for it.

The KV pool is what the simulated GPU would hold: its memory × utilisation, less weights, an
activation estimate and an overhead allowance (`metrics.model.capacity.plan_memory`), in blocks of the
simulated model's size. Pacing statistics (`pacing`) let a benchmark check that steps end on plan.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypedDict

from metrics.model import (
    GpuSpec,
    ModelConfig,
    SeqWork,
    dtype_bytes,
    kv_bytes_per_block,
    plan_memory,
    resolve_gpu,
    resolve_model,
    special_token_ids,
    step_cost,
    time_bound,
)
from refserver.engine.runner_base import ScheduledBatch
from refserver.engine.sequence import Sequence
from refserver.model import tiny_config

if TYPE_CHECKING:
    from refserver.engine.config import EngineConfig

# Printable filler: byte-level token ids (the tiny tokenizer's ids are the bytes themselves).
FILLER_TOKENS = tuple(b"lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor ")
_PACING_WINDOW = 100_000  # steps kept for pacing statistics
DEFAULT_SIM_MODEL = "Llama-3.1-8B"


class SimDescription(TypedDict):
    """What `/v1/models` and logs say about a simulated deployment (`SimModelRunner.describe`)."""

    engine: Literal["sim"]
    sim_model: str
    sim_gpu: str
    tp: int
    dtype: str
    kv_dtype: str
    efficiency: float
    step_overhead_s: float
    num_blocks: int
    block_size: int


@dataclass(slots=True)
class SimOptions:
    """What the sim engine simulates. The HTTP CLI maps `--sim-*` flags onto these fields."""

    # A metrics.model.presets model name, or a path to config.json / a model dir. None: the engine's model_dir
    # when it has one (its config.json sets the timing as well as the vocabulary), else DEFAULT_SIM_MODEL.
    model: str | None = None
    gpu: str = "H100-SXM"  # a metrics.model.presets GPU name
    tp: int = 1  # tensor-parallel size: step times and KV are per rank
    dtype: str = "bf16"  # weights
    kv_dtype: str | None = None  # KV cache; default: dtype
    # Achieved fraction of datasheet peaks. Large bf16 GEMMs and device copies reach ~80-90% of peak on
    # H100/H200; attention and small decode GEMMs less, so 0.75 is the default; 1.0 is the pure bound.
    efficiency: float = 0.75
    step_overhead_s: float = 0.0003  # fixed cost per step beyond the roofline (launches, sampling)
    gpu_memory_utilization: float = 0.9
    eos_after_tokens: int | None = None  # emit eos as this output token (respects min_tokens, ignore_eos)

    def __post_init__(self) -> None:
        if not 0.0 < self.efficiency <= 1.0:
            raise ValueError(f"sim efficiency must be in (0, 1], got {self.efficiency}")
        if self.step_overhead_s < 0:
            raise ValueError(f"sim step overhead must be >= 0, got {self.step_overhead_s}")
        if self.tp < 1:
            raise ValueError(f"sim tp must be >= 1, got {self.tp}")
        if self.eos_after_tokens is not None and self.eos_after_tokens < 1:
            raise ValueError(f"eos_after_tokens must be >= 1, got {self.eos_after_tokens}")
        dtype_bytes(self.dtype)
        dtype_bytes(self.kv_dtype or self.dtype)


@dataclass(slots=True)
class Pacing:
    """Per-step timing against plan, newest `_PACING_WINDOW` steps (seconds)."""

    planned_s: deque[float] = field(default_factory=lambda: deque(maxlen=_PACING_WINDOW))
    late_s: deque[float] = field(default_factory=lambda: deque(maxlen=_PACING_WINDOW))  # return − deadline
    gap_s: deque[float] = field(default_factory=lambda: deque(maxlen=_PACING_WINDOW))  # call − last deadline
    chained: deque[bool] = field(default_factory=lambda: deque(maxlen=_PACING_WINDOW))
    continuing: deque[bool] = field(default_factory=lambda: deque(maxlen=_PACING_WINDOW))
    steps: int = 0

    def errors_s(self) -> list[float]:
        """For each step that continued the last one's work: how much later than the back-to-back plan
        it ended — its lateness, plus the gap before it when the engine came back too late to chain."""
        return [late + (0.0 if chained else max(gap, 0.0))
                for late, gap, chained, continuing
                in zip(self.late_s, self.gap_s, self.chained, self.continuing, strict=True) if continuing]


class SimModelRunner:
    """A `ModelRunner` whose `execute` sleeps for the roofline time of the batch and returns filler."""

    def __init__(self, options: SimOptions, *, block_size: int, num_blocks: int | None = None,
                 max_num_batched_tokens: int = 8192, max_num_seqs: int = 256,
                 kv_cache_bytes: int | None = None, model_dir: str | None = None) -> None:
        self.options = options
        self.sim_model: ModelConfig = resolve_model(options.model or model_dir or DEFAULT_SIM_MODEL)
        self.gpu: GpuSpec = resolve_gpu(options.gpu)
        self.block_size = block_size
        self._wb = dtype_bytes(options.dtype)
        self._kb = dtype_bytes(options.kv_dtype or options.dtype)
        self.block_bytes = kv_bytes_per_block(self.sim_model, block_size=block_size, kv_dtype_bytes=self._kb,
                                              tp=options.tp)
        self._num_blocks = num_blocks if num_blocks is not None else self._pool_blocks(
            max_num_batched_tokens, max_num_seqs, kv_cache_bytes)
        if self._num_blocks < 1:
            raise ValueError(f"{self.sim_model.name} does not fit on {self.gpu.name} at TP={options.tp}: "
                             "no memory left for KV blocks")
        self._model_config = _served_config(self.sim_model, model_dir)
        self._last_deadline: float | None = None
        self._last_ids: set[str] = set()
        self.pacing = Pacing()

    def _pool_blocks(self, batched_tokens: int, max_num_seqs: int, kv_cache_bytes: int | None) -> int:
        if kv_cache_bytes is not None:
            return kv_cache_bytes // self.block_bytes
        o = self.options
        plan = plan_memory(self.sim_model, memory_bytes=self.gpu.memory_bytes, seq_tokens=self.block_size,
                           weight_dtype_bytes=self._wb, kv_dtype_bytes=self._kb, tp=o.tp,
                           block_size=self.block_size, utilization=o.gpu_memory_utilization,
                           batched_tokens=batched_tokens, max_num_seqs=max_num_seqs)
        return plan.kv_pool // self.block_bytes

    @property
    def model_config(self) -> ModelConfig:
        return self._model_config

    @property
    def num_blocks(self) -> int:
        return self._num_blocks

    def describe(self) -> SimDescription:
        """What `/v1/models` and logs should say about the simulated deployment."""
        o = self.options
        return {"engine": "sim", "sim_model": self.sim_model.name, "sim_gpu": self.gpu.name, "tp": o.tp,
                "dtype": o.dtype, "kv_dtype": o.kv_dtype or o.dtype, "efficiency": o.efficiency,
                "step_overhead_s": o.step_overhead_s, "num_blocks": self._num_blocks,
                "block_size": self.block_size}

    def step_duration_s(self, batch: ScheduledBatch) -> float:
        """Roofline time of this batch on one rank, over efficiency, plus the fixed step overhead."""
        work = [SeqWork(s.start_pos, len(s.token_ids), s.sample) for s in batch.seqs]
        cost = step_cost(self.sim_model, work, weight_dtype_bytes=self._wb, kv_dtype_bytes=self._kb,
                         tp=self.options.tp)
        return time_bound(cost, self.gpu, efficiency=self.options.efficiency).seconds + self.options.step_overhead_s

    def execute(self, batch: ScheduledBatch) -> list[int]:
        if not batch.seqs:
            return []
        called = time.perf_counter()
        duration = self.step_duration_s(batch)
        ids = {s.seq.request_id for s in batch.seqs}
        # A sequence carried over from the last step means the engine had work the whole time: the time
        # since the last deadline was its own bookkeeping, which a GPU would not see, so this step's
        # deadline follows the last one (and a late wake-up is made up, not carried forward). Only a
        # batch of newcomers may follow idleness, so it starts now; so does a step called so late that
        # its chained deadline has already passed (the process cannot keep up).
        continuing = not ids.isdisjoint(self._last_ids)
        last = self._last_deadline
        chained = continuing and last is not None and called - last <= duration
        deadline = (last if chained and last is not None else called) + duration
        while (remaining := deadline - time.perf_counter()) > 0:
            time.sleep(remaining)
        tokens = [self._next_token(s.seq) for s in batch.seqs if s.sample]
        returned = time.perf_counter()
        p = self.pacing
        p.planned_s.append(duration)
        p.late_s.append(returned - deadline)
        p.gap_s.append(0.0 if last is None else called - last)
        p.chained.append(chained)
        p.continuing.append(continuing)
        p.steps += 1
        self._last_deadline, self._last_ids = deadline, ids
        return tokens

    def _next_token(self, seq: Sequence) -> int:
        index = seq.num_output_tokens  # 0-based index of the token being produced
        params = seq.params
        eos = self._model_config.eos_token_id
        wants_eos = self.options.eos_after_tokens is not None and index + 1 >= self.options.eos_after_tokens
        if wants_eos and eos is not None and not params.ignore_eos and index + 1 > params.min_tokens:
            return eos
        offset = params.seed or 0
        return FILLER_TOKENS[(index + offset) % len(FILLER_TOKENS)]


def _served_config(sim_model: ModelConfig, model_dir: str | None) -> ModelConfig:
    """What the HTTP layer and request validation see: the vocabulary and eos of the tokenizer that will
    be served (the model directory's, else the bundled byte-level one) and the simulated model's context."""
    max_positions = sim_model.max_position_embeddings or tiny_config().max_position_embeddings
    served = dataclasses.replace(tiny_config(), max_position_embeddings=max_positions)
    if model_dir is None:
        return served
    path = Path(model_dir) / "config.json"
    try:
        hf = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from None
    bos, eos_ids = special_token_ids(hf, str(path))
    return dataclasses.replace(served, vocab_size=int(hf["vocab_size"]), eos_token_ids=eos_ids, bos_token_id=bos)


def make_sim_runner(config: EngineConfig) -> SimModelRunner:
    """Build the sim runner from an EngineConfig (`config.sim` holds SimOptions; None = defaults)."""
    options = config.sim if config.sim is not None else SimOptions()
    if not isinstance(options, SimOptions):
        raise TypeError(f"EngineConfig.sim must be a SimOptions, got {type(options).__name__}")
    return SimModelRunner(options, block_size=config.block_size, num_blocks=config.num_blocks,
                          max_num_batched_tokens=config.max_num_batched_tokens, max_num_seqs=config.max_num_seqs,
                          kv_cache_bytes=config.kv_cache_bytes, model_dir=config.model_dir)


def sim_options_from_flags(*, model: str | None, gpu: str, tp: int = 1, dtype: str = "bf16", kv_dtype: str | None = None,
                           efficiency: float = 0.75, step_overhead_ms: float = 0.3,
                           gpu_memory_utilization: float = 0.9, eos_after_tokens: int | None = None) -> SimOptions:
    """The CLI's entry: validate flag values (ValueError with a clear message) and resolve the presets now,
    so a bad `--sim-model` or `--sim-gpu` fails before the server starts."""
    options = SimOptions(model=model, gpu=gpu, tp=tp, dtype=dtype, kv_dtype=kv_dtype, efficiency=efficiency,
                         step_overhead_s=step_overhead_ms / 1e3, gpu_memory_utilization=gpu_memory_utilization,
                         eos_after_tokens=eos_after_tokens)
    if model is not None:
        resolve_model(model)
    resolve_gpu(gpu)
    return options


def describe_engine(engine: object) -> SimDescription | None:
    """The sim runner's description when `engine` (an AsyncLLMEngine or LLMEngine) runs on it, else None:
    what `/v1/models` adds so a client can tell it is talking to a simulation."""
    llm = getattr(engine, "engine", engine)
    runner = getattr(llm, "runner", None)
    return runner.describe() if isinstance(runner, SimModelRunner) else None
