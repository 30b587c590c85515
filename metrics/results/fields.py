"""The typed reading of one JSON value, shared by the views of the result documents.

Each helper takes what `json.loads` gave and returns the typed value, or None (or a default) when the value
is absent or of another type, the way the readers of the documents have always treated a value that is not
there: a view is parsed once, here, and read through typed fields after that.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the types only: the views load on first use
    from metrics.results.summary_parse import Json


def obj(value: Json) -> Mapping[str, Json]:
    """`value` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def obj_or_none(value: Json) -> Mapping[str, Json] | None:
    return value if isinstance(value, dict) else None


def num(value: object) -> float | None:
    """A JSON number as written (an int stays an int, so it is written back the same); None otherwise."""
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def integer(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def flag(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


def interval(value: object) -> tuple[float, float] | None:
    """A [low, high] pair of numbers, else None."""
    if isinstance(value, list | tuple) and len(value) == 2:
        lo, hi = num(value[0]), num(value[1])
        if lo is not None and hi is not None:
            return lo, hi
    return None


def pair_json(value: tuple[float, float] | None) -> list[float] | None:
    return list(value) if value is not None else None


def texts(value: object) -> tuple[str, ...]:
    """A list's items as strings (the way they are shown); () when it is not a list."""
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def objects(value: Json) -> list[Mapping[str, Json]]:
    """A list's JSON objects (anything else in it left out); [] when it is not a list."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
