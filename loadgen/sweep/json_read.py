"""Reading a point's summary.json (or any JSON document goodput wrote) as the recursive JSON type
(metrics.results `Json`), with the checks the readers have always made: a section that is absent reads as
empty, one of another type is a TypeError naming it (`goodput predict --measured` reports it as a
malformed file), and a count is what int() makes of it."""

from __future__ import annotations

from collections.abc import Mapping

from metrics.results import Json


def _object(value: Json, key: str) -> Mapping[str, Json]:
    if isinstance(value, Mapping):
        return value
    raise TypeError(f"{key} is not a JSON object ({value!r})")


def section(doc: Mapping[str, Json], key: str) -> Mapping[str, Json]:
    """doc[key]: a JSON object, or an empty one when the key is absent; TypeError for any other value."""
    return _object(doc.get(key, {}), key)


def part(doc: Mapping[str, Json], key: str) -> Mapping[str, Json]:
    """doc[key] when set: a JSON object, or an empty one when absent, null or empty; TypeError otherwise."""
    return _object(doc.get(key) or {}, key)


def as_float(value: Json) -> float:
    """float() of a number or a numeral, as the readers have always read one; TypeError for anything else."""
    if isinstance(value, int | float | str):
        return float(value)
    raise TypeError(f"float() argument must be a string or a real number, not '{type(value).__name__}'")


def whole(value: Json) -> int:
    """A count as int() makes it (a float truncated, a numeral parsed); 0 when absent, null or empty."""
    if not value:
        return 0
    if isinstance(value, int | float | str):
        return int(value)
    raise TypeError(f"int() argument must be a string, a bytes-like object or a real number, not "
                    f"'{type(value).__name__}'")
