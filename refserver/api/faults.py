"""Fault injection: make the reference server misbehave on purpose, reproducibly, to test clients.

Each request draws one fault kind (or none) from a seeded generator, in arrival order, so a run with
the same seed and the same request order fails the same requests. Kinds are mutually exclusive; the
fractions must add up to at most 1.

- `error_500`, `error_429`: answered at once with that HTTP status and an OpenAI-style error body.
- `disconnect`: the connection is closed mid-stream (after `after_chunks` content chunks) with no
  finish_reason and no `[DONE]`; a non-streaming request gets no response at all.
- `stall`: nothing is sent for `stall_s` seconds after `after_chunks` content chunks, then the stream
  resumes (a non-streaming response is held back for `stall_s`).
- `malformed`: one SSE event whose data is not valid JSON after `after_chunks` content chunks (a
  non-streaming request gets an invalid JSON body).
Every request also waits `first_token_delay_s` before its first content chunk and `token_delay_s` per
output token before each content chunk (added to what the engine takes).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

FaultKind = Literal["none", "error_500", "error_429", "disconnect", "stall", "malformed"]
_DRAWN_KINDS: tuple[FaultKind, ...] = ("error_500", "error_429", "disconnect", "stall", "malformed")


@dataclass(slots=True)
class FaultConfig:
    error_500: float = 0.0  # fraction of requests
    error_429: float = 0.0
    disconnect: float = 0.0
    stall: float = 0.0
    malformed: float = 0.0
    stall_s: float = 5.0
    after_chunks: int = 1  # mid-stream faults strike after this many content chunks
    token_delay_s: float = 0.0
    first_token_delay_s: float = 0.0
    seed: int = 0

    def fraction(self, kind: FaultKind) -> float:
        return 0.0 if kind == "none" else float(getattr(self, kind))

    def validate(self) -> None:
        """Raise ValueError naming the first bad setting."""
        for kind in _DRAWN_KINDS:
            if not 0.0 <= self.fraction(kind) <= 1.0:
                raise ValueError(f"fault fraction {kind}={self.fraction(kind)} must be within [0, 1]")
        total = sum(self.fraction(kind) for kind in _DRAWN_KINDS)
        if total > 1.0 + 1e-9:
            raise ValueError(f"fault fractions add up to {total:g}; at most 1 is possible")
        for name in ("stall_s", "token_delay_s", "first_token_delay_s"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")
        if self.after_chunks < 0:
            raise ValueError("after_chunks must be >= 0")

    @property
    def enabled(self) -> bool:
        return any(self.fraction(k) > 0 for k in _DRAWN_KINDS) or self.token_delay_s > 0 or self.first_token_delay_s > 0


class FaultInjector:
    """Draws each request's fault kind from one seeded generator."""

    def __init__(self, config: FaultConfig) -> None:
        config.validate()
        self.config = config
        self._rng = random.Random(config.seed)

    def draw(self) -> FaultKind:
        """One uniform draw per request, compared against the cumulative fractions."""
        u = self._rng.random()
        edge = 0.0
        for kind in _DRAWN_KINDS:
            edge += self.config.fraction(kind)
            if u < edge:
                return kind
        return "none"
