"""The checks the summary views (metrics.results.summary_view) parse summary.json's values with, once, at
the boundary: each returns the value when it has the type the writer gives it, else the reader's default.

Numbers keep the type JSON gave them (an int stays an int) so that a view prints what the document holds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

# A JSON value as the views write it back (`to_json`): read-only containers, so that a dict of ints is one.
Json = None | bool | int | float | str | Sequence["Json"] | Mapping[str, "Json"]
JsonObject = dict[str, Json]  # a section as written: a fresh dict, which its caller may extend


def json_value(value: object) -> Json:
    """A value made of JSON's types (a section built as a TypedDict, say) as a `Json`, checked once: the
    same values in the same order (a tuple becomes a list, as JSON writes it); TypeError for anything else."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return json_object(value)
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def json_object(value: Mapping[str, object]) -> JsonObject:
    """A JSON object (a TypedDict section) as a `JsonObject`, key order kept (see `json_value`)."""
    out: JsonObject = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise TypeError(f"not a JSON object key: {key!r}")
        out[key] = json_value(item)
    return out


def is_int(value: object) -> TypeGuard[int]:
    """A JSON integer (a bool is not one, though Python's bool is an int)."""
    return isinstance(value, int) and not isinstance(value, bool)


def count(value: Any) -> int:
    """An integer count; 0 when absent or not an integer (a bool is not one)."""
    return value if is_int(value) else 0


def int_or_none(value: Any) -> int | None:
    return value if is_int(value) else None


def number_or_none(value: Any) -> float | None:
    """An int or a float as it is (no conversion); None otherwise."""
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def float_or_none(value: object) -> float | None:
    """An int or a float as a float (NaN and the infinities kept as they are); None otherwise, a bool too."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def finite_or_none(value: object) -> float | None:
    """A finite int or float as a float; None otherwise (NaN, the infinities and a bool too)."""
    number = float_or_none(value)
    return number if number is not None and math.isfinite(number) else None


def bool_or_none(value: object) -> bool | None:
    """A JSON true or false as it is; None for any other value."""
    return value if isinstance(value, bool) else None


def text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def object_or_empty(value: Json) -> Mapping[str, Json]:
    """A JSON object as it is; an empty one for any other value (absent, null, another type)."""
    return value if isinstance(value, Mapping) else {}


def counts(value: Any) -> dict[str, int]:
    """An object of counts by name ({"http_status": 5}), in the document's order; {} when not an object."""
    if not isinstance(value, dict):
        return {}
    return {str(k): v for k, v in value.items() if is_int(v)}


def basis(value: Any) -> str | dict[str, int] | None:
    """A basis named once ("reported") or counted per request ({"usage_delta": 17}); None when neither."""
    if isinstance(value, str):
        return value
    return counts(value) if isinstance(value, dict) else None
