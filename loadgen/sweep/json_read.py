"""Reading a point's summary.json (or any JSON document goodput wrote) as the recursive JSON type
(metrics.results `Json`): a section that is not an object reads as empty, a count that is not a number as
0, so that a malformed document gives missing figures rather than a crash."""

from __future__ import annotations

from collections.abc import Mapping

from metrics.results import Json


def section(doc: Mapping[str, Json], key: str) -> Mapping[str, Json]:
    """doc[key] when it is a JSON object, else an empty one."""
    value = doc.get(key)
    return value if isinstance(value, Mapping) else {}


def number(value: Json) -> float | None:
    """A number as a float (a bool is not one); None otherwise."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def whole(value: Json) -> int:
    """A count as an int (a float truncated, as int() does); 0 when absent, null or not a number."""
    return int(value) if isinstance(value, int | float) else 0


def int_or_none(value: Json) -> int | None:
    """An integer (a bool is not one) as it is; None otherwise."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
