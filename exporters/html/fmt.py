"""How numbers read in the report's tables and labels ("–" for a number that does not exist: never 0)."""

from __future__ import annotations

from typing import Any

from metrics.results import finite_or_none

NONE = "–"


_number = finite_or_none  # NaN and the infinities print as "–"


def ms(seconds: Any) -> str:
    """A duration given in seconds, in milliseconds (seconds from 10 s up)."""
    v = _number(seconds)
    if v is None:
        return NONE
    if abs(v) >= 10:
        return f"{v:.3g} s" if abs(v) < 100 else f"{v:.0f} s"
    return f"{v * 1e3:.3g} ms" if abs(v) < 0.1 else f"{v * 1e3:.4g} ms"


def width(seconds: float) -> str:
    """A time bin's width: '50 ms', '2 s'."""
    return f"{seconds * 1e3:g} ms" if seconds < 1 else f"{seconds:g} s"


def num(value: Any, digits: int = 4) -> str:
    v = _number(value)
    if v is None:
        return NONE
    if v.is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    return f"{v:.{digits}g}"


def rate(value: Any, unit: str = "/s") -> str:
    v = _number(value)
    return NONE if v is None else f"{v:.4g}{unit}"


def pct(value: Any) -> str:
    v = _number(value)
    return NONE if v is None else f"{v * 100:.2f}%"


def count(value: Any) -> str:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else NONE
