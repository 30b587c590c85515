"""A `capacity:*` threshold reads the document's `capacity` object where it is one: a summary.json (no such
section) and a damaged capacity.json (`"capacity": null`) both have no data for it, never an AttributeError."""

from __future__ import annotations

from typing import Any

import pytest

from metrics.gate import RunView, parse_threshold


@pytest.mark.parametrize("document", [{}, {"capacity": None}, {"capacity": [6.3]}, {"capacity": {"upper": 8.0}}])
def test_no_capacity_object_is_no_data(document: dict[str, Any]) -> None:
    assert RunView(summary=document).value(parse_threshold("capacity:rate >= 6").query) is None


def test_the_capacity_object_gives_the_number() -> None:
    view = RunView(summary={"capacity": {"rate": 6.3, "points": 6}})
    assert view.value(parse_threshold("capacity:rate >= 6").query) == 6.3
    assert view.value(parse_threshold("capacity:points <= 6").query) == 6.0
