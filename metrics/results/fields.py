"""The typed reading of one JSON value, shared by the views of the result documents.

Each helper takes what `json.loads` gave and returns the typed value, or None (or a default) when the value
is absent or of another type, the way the readers of the documents have always treated a value that is not
there: a view is parsed once, here, and read through typed fields after that.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

# One reading of a value each, shared with summary.json's views (summary_parse): an object or {}, a number
# as written (an int stays an int, so it is written back the same), an integer, a text, a bool; None otherwise.
from metrics.results.summary_parse import bool_or_none as flag
from metrics.results.summary_parse import int_or_none as integer
from metrics.results.summary_parse import number_or_none as num
from metrics.results.summary_parse import object_or_empty as obj
from metrics.results.summary_parse import text_or_none as text

if TYPE_CHECKING:  # the types only: the views load on first use
    from metrics.results.summary_parse import Json

__all__ = ["flag", "integer", "interval", "num", "obj", "obj_or_none", "objects", "pair_json", "text", "texts"]


def obj_or_none(value: Json) -> Mapping[str, Json] | None:
    return value if isinstance(value, dict) else None


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
