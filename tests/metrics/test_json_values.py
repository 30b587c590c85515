"""A section built as a TypedDict enters the summary's JSON type through one checked conversion."""

from __future__ import annotations

import json

import pytest

from metrics.results import json_object
from metrics.results.summary_parse import json_value


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
