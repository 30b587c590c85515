"""Many models behind one server (`--model a,b,c` or `--model base:0.6,lora-a:0.3,lora-b:0.1`): which model
each request names.

- One name (no comma) is today's single model, whatever it holds: `llama3:8b`, `org/model:v2` and even
  `name:7` are sent as written.
- A comma-separated list is a mix. In a list, a trailing `:NUMBER` is the entry's weight (`base:0.6`); a
  name that itself ends in one takes an explicit weight after it (`phi3:3.8:1`). Either every entry has a
  weight or none does (equal shares); weights are positive and need not sum to 1 (shares are w / Σw).
- The draw (`ModelMix.draw`): request (or session) i of a run with seed S takes
  `u = numpy.random.default_rng([S, MODEL_STREAM, i]).random()` and the first model, in the order given,
  whose cumulative share exceeds u. A stream of its own: adding a mix changes no prompt, length or arrival.
- A dataset row or trace row that names its own `model` keeps it (the mix fills in only the others), and a
  conversation (`--turns`) keeps one model for all its turns (drawn once per session).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Any

from loadgen.seeds import item_rng
from loadgen.types import WorkItem, WorkloadDescription
from loadgen.workload.wrapped import WrappedSessions

MODEL_STREAM = 5_000_011  # seeds the model draw apart from every other per-item stream
_WEIGHT = re.compile(r"^(?P<name>.*):(?P<weight>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)$")


@dataclass(frozen=True, slots=True)
class ModelMix:
    names: tuple[str, ...]
    weights: tuple[float, ...]  # as given (equal shares: all 1)

    @property
    def shares(self) -> tuple[float, ...]:
        total = sum(self.weights)
        return tuple(w / total for w in self.weights)

    def draw(self, seed: int, index: int) -> str:
        """The model of request (or session) `index` (the rule of the module doc)."""
        u = item_rng(seed, MODEL_STREAM, index).random()
        total = sum(self.weights)
        cumulative = 0.0
        for name, weight in zip(self.names, self.weights, strict=True):
            cumulative += weight / total
            if u < cumulative:
                return name
        return self.names[-1]  # u within rounding of 1

    def describe(self) -> dict[str, float]:
        return {name: round(share, 9) for name, share in zip(self.names, self.shares, strict=True)}


def parse_models(text: str) -> ModelMix:
    """`--model` as a mix of one or more models; ValueError (one line) when a list is malformed."""
    if "," not in text:
        return ModelMix((text,), (1.0,))
    names: list[str] = []
    weights: list[float | None] = []
    for entry in text.split(","):
        entry = entry.strip()
        match = _WEIGHT.match(entry)
        name, weight = (match["name"].strip(), float(match["weight"])) if match else (entry, None)
        if not name:
            raise ValueError(f"--model {text!r}: every model of the list needs a name")
        if weight is not None and not (math.isfinite(weight) and weight > 0):
            raise ValueError(f"--model {text!r}: the weight of {name!r} must be a positive number, got {match and match['weight']}")
        if name in names:
            raise ValueError(f"--model {text!r}: {name!r} is listed twice")
        names.append(name)
        weights.append(weight)
    if None in weights and any(w is not None for w in weights):
        raise ValueError(f"--model {text!r}: give every model a weight or none (a trailing :NUMBER is a weight; "
                         "write NAME:NUMBER:1 for a name that ends in one)")
    return ModelMix(tuple(names), tuple(1.0 if w is None else w for w in weights))


def model_names(text: str | None) -> tuple[str, ...]:
    """The names `--model` asks for (none without `--model`)."""
    return parse_models(text).names if text else ()


@dataclass(slots=True)
class MixedWorkload:
    """Any workload of single requests, each naming its model from the mix (a row's own model kept)."""

    inner: Any  # loadgen.workload.sources.Workload
    mix: ModelMix
    seed: int

    def item(self, index: int) -> WorkItem:
        item: WorkItem = self.inner.item(index)
        return item if item.model is not None else replace(item, model=self.mix.draw(self.seed, index))

    def describe(self) -> WorkloadDescription:
        inner: WorkloadDescription = self.inner.describe()
        return {**inner, "models": self.mix.describe()}


@dataclass(slots=True)
class MixedSessions(WrappedSessions):
    """Any session workload, each conversation naming one model from the mix for all its turns."""

    mix: ModelMix
    seed: int

    def session(self, index: int) -> Any:
        session = self.inner.session(index)
        if session.model is None:
            session.model = self.mix.draw(self.seed, index)
        return session

    def describe(self) -> WorkloadDescription:
        inner: WorkloadDescription = self.inner.describe()
        return {**inner, "models": self.mix.describe()}


def row_model(value: Any, where: str) -> str | None:
    """A dataset or trace row's own `model`: absent (or null), or a non-empty string."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: 'model' must be a non-empty string")
    return value
