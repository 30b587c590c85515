"""Token-length distributions for synthetic workloads: `512`, `uniform:128:1024`, `normal:512:64`,
`lognormal:400:0.6` (median, sigma of the underlying normal). Every draw is an integer >= 1, seeded, and
at most MAX_TOKENS (loadgen.workload.bounds); `check_length` refuses a distribution that would often reach
it."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from loadgen.workload.bounds import MAX_TOKENS
from metrics import parse_length_spec

# A normal or lognormal length draws beyond this many standard deviations (of the underlying normal) about
# once in a million: such a distribution is judged by the length it reaches there, and the rarer draws
# beyond the limit are cut to it (LengthDist.sample).
TAIL_SIGMAS = 4.75


def plain_number(value: float) -> str:
    """A number as a person writes it and as it parses back exactly: `64` (not `64.0`), `0.6`, `1e+20`."""
    text = repr(float(value))
    return text.removesuffix(".0")


@dataclass(frozen=True, slots=True)
class LengthDist:
    kind: str
    a: float  # fixed value | uniform low | normal mean | lognormal median
    b: float = 0.0  # uniform high | normal std | lognormal sigma

    def __str__(self) -> str:
        if self.kind == "fixed":
            return plain_number(self.a)
        return f"{self.kind}:{plain_number(self.a)}:{plain_number(self.b)}"

    def sample_one(self, rng: np.random.Generator) -> int:
        """`int(self.sample(1, rng)[0])`, drawing the same numbers; a fixed length without numpy's array
        machinery (this runs once per request)."""
        if self.kind == "fixed":
            return min(MAX_TOKENS, max(1, round(self.a)))  # round() and np.rint both round half to even
        return int(self.sample(1, rng)[0])

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n integer lengths, each from 1 to MAX_TOKENS (a rare draw of a wide distribution is cut)."""
        if self.kind == "fixed":
            raw = np.full(n, self.a)
        elif self.kind == "uniform":
            raw = rng.integers(int(self.a), int(self.b), size=n, endpoint=True).astype(np.float64)
        elif self.kind == "normal":
            raw = rng.normal(self.a, self.b, size=n)
        else:
            raw = rng.lognormal(math.log(self.a), self.b, size=n)
        out: np.ndarray = np.clip(np.rint(raw), 1, MAX_TOKENS).astype(np.int64)
        return out


def parse_length(spec: str) -> LengthDist:
    """Parse a length spec (metrics.lengths); ValueError with a one-line reason for anything else."""
    return LengthDist(*parse_length_spec(spec))


def highest_length(dist: LengthDist) -> float:
    """The largest length `dist` draws (a normal or lognormal: its one-in-a-million upper tail)."""
    if dist.kind == "fixed":
        return dist.a
    if dist.kind == "uniform":
        return dist.b
    if dist.kind == "normal":
        return dist.a + TAIL_SIGMAS * dist.b
    return dist.a * math.exp(min(TAIL_SIGMAS * dist.b, 700.0))


def check_length(dist: LengthDist, flag: str, *, limit: int = MAX_TOKENS) -> None:
    """ValueError naming `flag` when `dist` can draw more than `limit` tokens."""
    top = highest_length(dist)
    if top > limit:
        reach = "" if dist.kind in ("fixed", "uniform") else f" (it reaches {top:.3g} in its upper tail)"
        raise ValueError(f"{flag} {shown_length(dist)}: at most {limit:,} tokens per request{reach}")


def shown_length(dist: LengthDist) -> str:
    """A length as the user wrote it (a whole number in full, unless it is astronomically large)."""
    if dist.kind == "fixed" and dist.a < 1e15:
        return str(int(dist.a))
    return str(dist)
