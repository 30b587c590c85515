"""The step-time model of a served engine (docs/capacity.md, Predicting from a calibrated model).

One engine step's duration follows what the step does, in one of two forms:

    additive:    step_s = fixed_s + prefill_s · P + prefill_ctx_s · PC + decode_seq_s · D + decode_kv_s · K
    overlapped:  step_s = fixed_s + max(memory_s + decode_kv_s · K,  prefill_s · P + prefill_ctx_s · PC
                                                                      + decode_seq_s · D)

- P: prefill tokens computed this step (chunks of prompts, or recomputes), PC: Σ over prefill chunks of
  chunk tokens × context after the chunk (attention's growth with context),
- D: sequences decoding one token, K: KV tokens those decode steps read (Σ of their context lengths).

The overlapped form is the roofline's shape (a step reads the weights and the KV while it computes, and
lasts the longer of the two): memory_s is the weights' read time, hidden under a long prefill's compute.
The additive form has no memory_s (it is part of fixed_s). With the scheduler limits that shape queueing (running sequences, tokens per step, KV blocks and their
size, prefix caching) it is everything the predictor needs; `server-model.json` holds it with each
parameter's standard error. The reference scheduler always chunks prefills (`chunked_prefill` true).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TypedDict

from loadgen.predict.fit_json import FitJson, parse_fit
from loadgen.sweep import as_float
from metrics.results import Json, json_object

SCHEMA_VERSION = 1
PARAMS = ("fixed_s", "memory_s", "prefill_s", "prefill_ctx_s", "decode_seq_s", "decode_kv_s")
COMPUTE = ("prefill_s", "prefill_ctx_s", "decode_seq_s")


class LimitsJson(TypedDict):
    """server-model.json's `limits`: SchedulerLimits' fields."""

    max_num_seqs: int
    max_num_batched_tokens: int
    block_size: int
    num_blocks: int
    enable_prefix_caching: bool
    chunked_prefill: bool


class StepModelJson(TypedDict):
    """server-model.json as `goodput calibrate` writes it: StepModel's fields after the schema version."""

    schema_version: int
    fixed_s: float
    memory_s: float
    prefill_s: float
    prefill_ctx_s: float
    decode_seq_s: float
    decode_kv_s: float
    overlap: bool
    limits: LimitsJson
    std_err: dict[str, float]
    fit: FitJson  # how it was fitted, as calibrate records it (loadgen.predict.fit_json)


@dataclass(frozen=True, slots=True)
class StepFeatures:
    prefill_tokens: int = 0  # P
    prefill_ctx: float = 0.0  # PC: Σ chunk tokens × context after the chunk
    decode_seqs: int = 0  # D
    kv_tokens: int = 0  # K: Σ context of the decoding sequences

    def row(self, side: str | None = None) -> list[float]:
        """The regressors in PARAMS order: additive (side None), or the overlapped form's for a step whose
        memory ("memory") or compute ("compute") side is the longer: the other side's columns are 0."""
        mem = 1.0 if side in (None, "memory") else 0.0
        comp = 1.0 if side in (None, "compute") else 0.0
        return [1.0, mem if side is not None else 0.0, comp * self.prefill_tokens, comp * self.prefill_ctx,
                comp * self.decode_seqs, mem * self.kv_tokens]


@dataclass(frozen=True, slots=True)
class SchedulerLimits:
    max_num_seqs: int = 64
    max_num_batched_tokens: int = 512
    block_size: int = 16
    num_blocks: int = 65_536
    enable_prefix_caching: bool = True
    chunked_prefill: bool = True

    def __post_init__(self) -> None:
        for name in ("max_num_seqs", "max_num_batched_tokens", "block_size", "num_blocks"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not self.chunked_prefill:
            raise ValueError("the reference scheduler always chunks prefills: chunked_prefill must be true")


@dataclass(frozen=True, slots=True)
class StepModel:
    fixed_s: float
    memory_s: float = 0.0
    prefill_s: float = 0.0
    prefill_ctx_s: float = 0.0
    decode_seq_s: float = 0.0
    decode_kv_s: float = 0.0
    overlap: bool = False  # the overlapped form (max of memory and compute) instead of the additive one
    limits: SchedulerLimits = field(default_factory=SchedulerLimits)
    std_err: dict[str, float] = field(default_factory=dict)  # per PARAMS name; absent = not fitted
    fit: FitJson = field(default_factory=FitJson)  # how it was fitted: sources, points, residuals

    def params(self) -> list[float]:
        return [float(getattr(self, name)) for name in PARAMS]

    def with_params(self, values: list[float]) -> StepModel:
        v = dict(zip(PARAMS, values, strict=True))
        return replace(self, fixed_s=v["fixed_s"], memory_s=v["memory_s"], prefill_s=v["prefill_s"],
                       prefill_ctx_s=v["prefill_ctx_s"], decode_seq_s=v["decode_seq_s"], decode_kv_s=v["decode_kv_s"])

    def shifted(self, sign: float) -> StepModel:
        """Every parameter moved by `sign` standard errors (never below 0): the uncertainty band's ends."""
        return self.with_params([max(0.0, v + sign * self.std_err.get(n, 0.0))
                                 for n, v in zip(PARAMS, self.params(), strict=True)])

    def step_s(self, f: StepFeatures) -> float:
        return self.seconds(f.prefill_tokens, f.prefill_ctx, f.decode_seqs, f.kv_tokens)

    def seconds(self, prefill_tokens: int, prefill_ctx: float, decode_seqs: int, kv_tokens: int) -> float:
        """step_s of the features P, PC, D, K given one by one."""
        if self.overlap:
            return overlapped_step_seconds(self, prefill_tokens, prefill_ctx, decode_seqs, kv_tokens)
        return step_seconds(self, prefill_tokens, prefill_ctx, decode_seqs, kv_tokens)

    def side(self, f: StepFeatures) -> str:
        """Which side of the overlapped form is the longer for this step."""
        return "compute" if compute_seconds(self, f.prefill_tokens, f.prefill_ctx, f.decode_seqs) > \
            memory_seconds(self, f.kv_tokens) else "memory"

    def to_json(self) -> StepModelJson:
        """server-model.json's document (copies of the dicts: the frozen model shares none)."""
        lim = self.limits
        return {"schema_version": SCHEMA_VERSION, "fixed_s": self.fixed_s, "memory_s": self.memory_s,
                "prefill_s": self.prefill_s, "prefill_ctx_s": self.prefill_ctx_s, "decode_seq_s": self.decode_seq_s,
                "decode_kv_s": self.decode_kv_s, "overlap": self.overlap,
                "limits": {"max_num_seqs": lim.max_num_seqs, "max_num_batched_tokens": lim.max_num_batched_tokens,
                           "block_size": lim.block_size, "num_blocks": lim.num_blocks,
                           "enable_prefix_caching": lim.enable_prefix_caching, "chunked_prefill": lim.chunked_prefill},
                "std_err": dict(self.std_err), "fit": copy.deepcopy(self.fit)}

    @classmethod
    def from_json(cls, data: Mapping[str, Json], source: str = "server model") -> StepModel:
        """ValueError with one line when the document is not a server model this version reads."""
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise ValueError(f"{source}: schema_version {version!r} is not {SCHEMA_VERSION}")
        try:
            limits = limits_of(data.get("limits", {}))
            values = {name: as_float(data.get(name, 0.0) if name == "memory_s" else data[name])
                      for name in PARAMS}
            std = {k: as_float(v) for k, v in _object(data.get("std_err", {}), "std_err").items()}
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{source}: not a server model ({exc})") from None
        if any(v < 0 for v in values.values()):
            raise ValueError(f"{source}: step-time parameters must be >= 0")
        overlap = bool(data.get("overlap", False))
        fit = parse_fit(data.get("fit"), source)
        return model_of(values, overlap=overlap, limits=limits, std_err=std, fit=fit)

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")


def _object(value: Json, name: str) -> Mapping[str, Json]:
    if isinstance(value, Mapping):
        return value
    raise TypeError(f"{name} is not an object ({value!r})")


def _count(limits: Mapping[str, Json], name: str, default: int) -> int:
    value = limits.get(name, default)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise TypeError(f"limits.{name} is not an integer ({value!r})")


def _flag(limits: Mapping[str, Json], name: str, default: bool) -> bool:
    value = limits.get(name, default)
    if isinstance(value, bool):
        return value
    raise TypeError(f"limits.{name} is not true or false ({value!r})")


def limits_of(value: Json) -> SchedulerLimits:
    """server-model.json's `limits` (a limit it lacks takes SchedulerLimits' default): TypeError for a key
    SchedulerLimits has not or a value of another type than its field's, ValueError for a limit below 1."""
    limits = _object(value, "limits")
    known = [f.name for f in fields(SchedulerLimits)]
    if unknown := [k for k in limits if k not in known]:
        raise TypeError(f"limits has no {unknown[0]!r}")
    d = SchedulerLimits()
    return SchedulerLimits(
        max_num_seqs=_count(limits, "max_num_seqs", d.max_num_seqs),
        max_num_batched_tokens=_count(limits, "max_num_batched_tokens", d.max_num_batched_tokens),
        block_size=_count(limits, "block_size", d.block_size),
        num_blocks=_count(limits, "num_blocks", d.num_blocks),
        enable_prefix_caching=_flag(limits, "enable_prefix_caching", d.enable_prefix_caching),
        chunked_prefill=_flag(limits, "chunked_prefill", d.chunked_prefill))


def model_of(values: dict[str, float], *, overlap: bool = False, limits: SchedulerLimits | None = None,
             std_err: dict[str, float] | None = None, fit: FitJson | None = None) -> StepModel:
    """A model from PARAMS values (memory_s may be absent: 0)."""
    base = StepModel(fixed_s=0.0, overlap=overlap, limits=limits or SchedulerLimits(), std_err=std_err or {},
                     fit=fit or {})
    return base.with_params([values.get(name, 0.0) for name in PARAMS])


def compute_seconds(m: StepModel, prefill_tokens: int, prefill_ctx: float, decode_seqs: int) -> float:
    """a·P + c·PC + b_seq·D."""
    return m.prefill_s * prefill_tokens + m.prefill_ctx_s * prefill_ctx + m.decode_seq_s * decode_seqs


def memory_seconds(m: StepModel, kv_tokens: int) -> float:
    """memory + b_kv·K."""
    return m.memory_s + m.decode_kv_s * kv_tokens


def step_seconds(m: StepModel, prefill_tokens: int, prefill_ctx: float, decode_seqs: int, kv_tokens: int) -> float:
    """Additive: fixed + memory + a·P + c·PC + b_seq·D + b_kv·K."""
    return m.fixed_s + compute_seconds(m, prefill_tokens, prefill_ctx, decode_seqs) + memory_seconds(m, kv_tokens)


def overlapped_step_seconds(m: StepModel, prefill_tokens: int, prefill_ctx: float, decode_seqs: int,
                            kv_tokens: int) -> float:
    """Overlapped: fixed + max(memory + b_kv·K, a·P + c·PC + b_seq·D)."""
    return m.fixed_s + max(memory_seconds(m, kv_tokens), compute_seconds(m, prefill_tokens, prefill_ctx, decode_seqs))


def load_model(path: Path) -> StepModel:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a server model (not a JSON object)")
    return StepModel.from_json(json_object(data), str(path))
