"""Reading a few figures of summary.json while it is being built (its roofline and gpu sections come from its
other sections): a section as an object, a figure as a number, each {} or None when absent or of another
type, so the section is left without it as before."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from metrics.results import Json


def section_of(value: Json) -> Mapping[str, Json]:
    """A summary section read as an object ({} when it is absent or not one)."""
    return value if isinstance(value, Mapping) else {}


def number_of(value: Json) -> float | None:
    """An int or a float as it is (no conversion); None otherwise."""
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None
