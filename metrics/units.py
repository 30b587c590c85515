"""Units: nanosecond clock values to seconds, durations typed by people, token-count labels.

Durations are parsed through `Decimal` so that `"50ms"` becomes exactly the float nearest to 0.05 —
the same float as `50_000_000 / NS_PER_S` — and an SLO of 50 ms therefore admits a measured 50 ms
(inclusive ≤) instead of losing it to a rounding difference.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

NS_PER_S = 1_000_000_000

_DURATION = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(ms|us|µs|s|)\s*$")
_DIVISOR = {"": Decimal(1), "s": Decimal(1), "ms": Decimal(1000), "us": Decimal(1_000_000), "µs": Decimal(1_000_000)}


def ns_to_s(ns: int) -> float:
    """Seconds from an integer nanosecond count (one rounding, so equal ns give equal seconds)."""
    return ns / NS_PER_S


def parse_duration(text: str) -> float:
    """Seconds from `"500ms"`, `"0.5s"`, `"250us"` or a bare number of seconds (`"0.5"`).

    Raises ValueError naming the text and the accepted forms; negative values are rejected by the
    grammar (a latency bound below zero is always a typo).
    """
    match = _DURATION.match(text)
    if match is None:
        raise ValueError(
            f"invalid duration {text!r}: expected a non-negative number with an optional unit "
            "ms, us or s (bare numbers are seconds), e.g. 500ms, 0.5s, 250us, 0.5"
        )
    try:
        value = Decimal(match.group(1)) / _DIVISOR[match.group(2)]
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only valid decimals
        raise ValueError(f"invalid duration {text!r}") from exc
    return float(value)


def token_label(count: int) -> str:
    """`2048` → `"2k"`, `32768` → `"32k"`, `500` → `"500"`: how bucket edges are written."""
    if count >= 1024 and count % 1024 == 0:
        return f"{count // 1024}k"
    if count >= 1000 and count % 1000 == 0:
        return f"{count // 1000}k"
    return str(count)
