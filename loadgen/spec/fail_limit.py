"""`--max-failed`: how many failed requests a run may have before it counts as not having worked (exit 1).

A share of the requests whose outcome is known (`10%`: more than a tenth of succeeded + failed) or a count
(`25`: more than 25 failed). `100%` never trips: the exit code then ignores failures, as it did before
the limit existed (a run in which nothing succeeded still exits 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

DEFAULT_MAX_FAILED = "10%"


@dataclass(frozen=True, slots=True)
class FailLimit:
    share: float | None = None  # in [0, 1]: failed / (succeeded + failed) above it trips the limit
    count: int | None = None  # failed above it trips the limit

    def __str__(self) -> str:
        if self.share is not None:
            return f"{self.share * 100:g}%"
        return str(self.count)

    def exceeded(self, failed: int, known: int) -> bool:
        """Whether `failed` of `known` (succeeded + failed) requests is over the limit."""
        if self.share is not None:
            return known > 0 and failed / known > self.share
        return self.count is not None and failed > self.count


def parse_fail_limit(text: object) -> FailLimit:
    """`10%`, `2.5%` or a count `25` (ValueError naming --max-failed otherwise)."""
    raw = str(text).strip()
    problem = f"--max-failed must be a percentage (10%) or a count of requests (25), got {raw!r}"
    try:
        if raw.endswith("%"):
            percent = float(raw[:-1])
            if not (math.isfinite(percent) and 0 <= percent <= 100):
                raise ValueError(problem)
            return FailLimit(share=percent / 100)
        count = int(raw)
    except ValueError:
        raise ValueError(problem) from None
    if count < 0:
        raise ValueError(problem)
    return FailLimit(count=count)
