"""What kind of model the reference server plays: a reasoning model, a tool-calling model, or neither.

`--reasoning-tokens DIST`: the first K output tokens of every answer are reasoning, K drawn per request
from DIST, written as `goodput run` writes lengths (`64`, `uniform:32:128`, `normal:64:16`,
`lognormal:64:0.5`). `--tool-call-rate P`: when a request carries tools, that share of its answers are
one call of one of them (always, when its tool choice requires one; never with `none`).

Draws are seeded: a request with its own `seed` draws from that seed (so the same request gets the same
plan whatever else the server is doing), any other from one generator seeded by the server's `--seed`,
in arrival order. The length grammar is `goodput run`'s own, parsed by the one parser both use
(metrics.lengths).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from metrics import parse_length_spec

_SEED_MIX = 0x9E3779B97F4A7C15  # keeps a request's own seed apart from the server's


@dataclass(frozen=True, slots=True)
class TokenDist:
    kind: str  # fixed | uniform | normal | lognormal
    a: float  # value | low | mean | median
    b: float = 0.0  # high | std | sigma

    def draw(self, rng: random.Random) -> int:
        """One count >= 1."""
        if self.kind == "fixed":
            raw = self.a
        elif self.kind == "uniform":
            raw = rng.randint(int(self.a), int(self.b))
        elif self.kind == "normal":
            raw = rng.gauss(self.a, self.b)
        else:
            raw = rng.lognormvariate(math.log(self.a), self.b)
        return max(1, round(raw))


def parse_token_dist(spec: str) -> TokenDist:
    """`N`, `uniform:LO:HI`, `normal:MEAN:STD` or `lognormal:MEDIAN:SIGMA` (metrics.lengths); ValueError
    with the reason."""
    return TokenDist(*parse_length_spec(spec))


@dataclass(frozen=True, slots=True)
class Tool:
    """A tool a request offers: its name and the argument the simulated call fills (see `arguments_key`)."""

    name: str
    arguments_key: str = "input"


ToolChoice = str  # "auto" | "none" | "required" | "function:<name>"


@dataclass(frozen=True, slots=True)
class ToolCallPlan:
    tool: Tool
    call_id: str


@dataclass(frozen=True, slots=True)
class TurnPlan:
    reasoning_tokens: int = 0  # the first K output tokens are reasoning (0: none)
    tool_call: ToolCallPlan | None = None


@dataclass(slots=True)
class Behaviour:
    """The server's settings and its arrival-order generator."""

    reasoning: TokenDist | None = None
    tool_call_rate: float = 0.0
    seed: int = 0
    _rng: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not 0.0 <= self.tool_call_rate <= 1.0:
            raise ValueError(f"--tool-call-rate must be in [0, 1], got {self.tool_call_rate}")
        self._rng = random.Random(self.seed)

    @property
    def reasons(self) -> bool:
        return self.reasoning is not None

    def plan(self, *, request_seed: int | None, tools: list[Tool], tool_choice: ToolChoice) -> TurnPlan:
        """The plan of one request's answer; draws the same numbers for the same request seed."""
        if request_seed is None:
            rng = random.Random(self._rng.getrandbits(64))
        else:
            rng = random.Random((request_seed ^ _SEED_MIX) * 31 + self.seed)
        k = self.reasoning.draw(rng) if self.reasoning is not None else 0
        calls = rng.random() < self.tool_call_rate  # drawn always, so one choice never shifts the next
        index = rng.randrange(len(tools)) if tools else 0
        call_id = f"call_{rng.getrandbits(64):016x}"
        tool = _chosen_tool(tools, tool_choice, index, calls)
        return TurnPlan(reasoning_tokens=k, tool_call=None if tool is None else ToolCallPlan(tool, call_id))


def _chosen_tool(tools: list[Tool], choice: ToolChoice, index: int, calls: bool) -> Tool | None:
    if not tools or choice == "none":
        return None
    if choice.startswith("function:"):
        name = choice.removeprefix("function:")
        return next(t for t in tools if t.name == name)
    if choice == "required" or calls:
        return tools[index]
    return None
