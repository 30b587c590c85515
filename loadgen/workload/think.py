"""Think time: how long a simulated user waits between a turn's answer and their next message (`--think-time`).

Forms: `2s` (fixed), `exponential:5s` (mean), `uniform:1s:4s`, `lognormal:3s:0.5` (median, sigma of the
underlying normal). Durations take the units of every duration flag (`ms`, `s`, `m`; a bare number is
seconds). `str()` writes a form `parse_think_time` reads back to the same value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from loadgen.workload.durations import format_duration, parse_duration_flag
from loadgen.workload.lengths import plain_number

THINK_KINDS = ("fixed", "exponential", "uniform", "lognormal")
_FORMS = "DURATION, exponential:MEAN, uniform:LO:HI or lognormal:MEDIAN:SIGMA"


@dataclass(frozen=True, slots=True)
class ThinkTime:
    kind: str = "fixed"
    a: float = 0.0  # seconds: the fixed value | exponential mean | uniform low | lognormal median
    b: float = 0.0  # uniform high (seconds) | lognormal sigma (unitless)

    def __str__(self) -> str:
        if self.kind == "fixed":
            return format_duration(self.a)
        if self.kind == "exponential":
            return f"exponential:{format_duration(self.a)}"
        if self.kind == "uniform":
            return f"uniform:{format_duration(self.a)}:{format_duration(self.b)}"
        return f"lognormal:{format_duration(self.a)}:{plain_number(self.b)}"

    def sample(self, rng: np.random.Generator) -> float:
        """One wait in seconds (never negative)."""
        if self.kind == "fixed":
            return self.a
        if self.kind == "exponential":
            return float(rng.exponential(self.a)) if self.a > 0 else 0.0
        if self.kind == "uniform":
            return float(rng.uniform(self.a, self.b))
        return float(rng.lognormal(math.log(self.a), self.b)) if self.a > 0 else 0.0


def parse_think_time(text: str, flag: str = "--think-time") -> ThinkTime:
    """`--think-time` (or another flag's duration distribution, e.g. `--cancel-after`) → ThinkTime; ValueError
    with a one-line reason naming the flag and the forms."""
    parts = str(text).strip().split(":")
    kind = parts[0] if len(parts) > 1 else "fixed"
    if kind not in THINK_KINDS[1:] and len(parts) > 1:
        raise ValueError(f"{flag}: unknown distribution {kind!r} in {text!r}; use {_FORMS}")
    try:
        if kind == "fixed":
            return _checked(ThinkTime("fixed", _seconds(parts[0], flag)), text)
        if kind == "exponential" and len(parts) == 2:
            return _checked(ThinkTime("exponential", _seconds(parts[1], flag)), text)
        if kind == "uniform" and len(parts) == 3:
            return _checked(ThinkTime("uniform", _seconds(parts[1], flag), _seconds(parts[2], flag)), text)
        if kind == "lognormal" and len(parts) == 3:
            return _checked(ThinkTime("lognormal", _seconds(parts[1], flag), float(parts[2])), text)
    except ValueError as exc:
        raise ValueError(f"{flag}: bad value {text!r} ({exc}); use {_FORMS}") from None
    raise ValueError(f"{flag}: bad value {text!r}; use {_FORMS}")


def _seconds(text: str, flag: str) -> float:
    return parse_duration_flag(text, flag)


def _checked(think: ThinkTime, text: str) -> ThinkTime:
    ok = math.isfinite(think.a) and think.a >= 0 and math.isfinite(think.b) and think.b >= 0
    if think.kind == "uniform":
        ok = ok and think.a <= think.b
    if not ok:
        raise ValueError("durations must be finite, not negative, and LO <= HI")
    return think
