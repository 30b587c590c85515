"""A section built as a TypedDict enters the summary's JSON type through one checked conversion; a value read
back goes through one reader of its type (metrics.results.summary_parse)."""

from __future__ import annotations

import json
import math

import pytest

from metrics.results import (
    bool_or_none,
    finite_or_none,
    float_or_none,
    int_or_none,
    is_int,
    json_object,
    number_or_none,
    object_or_empty,
)
from metrics.results.summary_parse import count, json_value, text_or_none


def test_the_same_values_in_the_same_order() -> None:
    section = {"requests": 3, "share": 0.5, "none": None, "flag": True, "deadlines": (0.2, 0.05),
               "nested": {"b": 1, "a": [1, 2.0]}}
    out = json_object(section)
    assert list(out) == list(section)
    assert json.dumps(out) == json.dumps(section)
    assert out["deadlines"] == [0.2, 0.05] and isinstance(out["requests"], int) and isinstance(out["share"], float)


def test_a_value_json_cannot_hold_is_refused() -> None:
    with pytest.raises(TypeError, match="not a JSON value: set"):
        json_value({"a": {1, 2}})
    with pytest.raises(TypeError, match="not a JSON object key"):
        json_object({1: "x"})  # type: ignore[dict-item]


def test_each_reader_takes_only_its_own_type() -> None:
    """One reader of a JSON value each, for every module that reads one: a bool is never a number (Python's
    bool is an int), a numeral is not a number, and what does not fit reads as the reader's default."""
    nan, inf = float("nan"), float("inf")
    assert [is_int(v) for v in (5, 0, -1, True, False, 2.0, "3", None)] == [True] * 3 + [False] * 5
    assert [count(v) for v in (5, 0, -1, None, True, 2.0, "3", [1])] == [5, 0, -1, 0, 0, 0, 0, 0]
    assert [int_or_none(v) for v in (4, -3, 4.0, True, False, "4", None)] == [4, -3, None, None, None, None, None]
    # number_or_none keeps the document's type: an int stays an int (written back as `2`, not `2.0`)
    kept = [number_or_none(v) for v in (2, 0.5, True, "1", None, [2])]
    assert kept == [2, 0.5, None, None, None, None] and type(kept[0]) is int
    assert math.isnan(number_or_none(nan) or 0.0) and number_or_none(-inf) == -inf
    # float_or_none makes every number a float, NaN and the infinities kept
    floats = [float_or_none(v) for v in (2, 0.5, 10**20, True, False, "1", None, {"a": 1})]
    assert floats == [2.0, 0.5, 1e20, None, None, None, None, None] and type(floats[0]) is float
    assert math.isnan(float_or_none(nan) or 0.0) and float_or_none(inf) == inf
    # finite_or_none: a float only when it is finite (what a page prints, what a fit takes)
    finite = [finite_or_none(v) for v in (2, 0.5, nan, inf, -inf, True, "1", None)]
    assert finite == [2.0, 0.5, None, None, None, None, None, None] and type(finite[0]) is float
    assert [bool_or_none(v) for v in (True, False, 1, 0, "true", None)] == [True, False, None, None, None, None]
    assert [text_or_none(v) for v in ("", "a", 1, None, True)] == ["", "a", None, None, None]
    assert object_or_empty({"a": 1}) == {"a": 1}
    assert [object_or_empty(v) for v in (None, [1], "x", 3)] == [{}, {}, {}, {}]
