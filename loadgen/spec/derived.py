"""The run options whose spec field is their value or a standard conversion of it, made from their
declarations alone: an `Option` with `spec="load.warmup_s"` and `codec="duration"` (loadgen.spec.options)
gives `build_spec` the keyword argument `warmup_s` of the load section, and `spec_values` (what
`--print-config` writes) the option's value back from that field. Adding such an option is its declaration
and its section's field; options with logic of their own (defaults that depend on other options, several
options to one field, secrets) stay written by hand in `loadgen.spec.build`.

The codecs, each with its inverse:
- `copy`: the value as it is;
- `or_none`: the value, an empty one read as absent (`value or None`);
- `text`: a path (or text) as its text, an empty or absent one kept as it is (`value and str(value)`);
- `duration`: a duration's text → seconds (`10s`, `500ms`; required);
- `duration_or_none`: the same, absent → None;
- `positive_duration`: the same, absent → None, and 0 refused;
- `length`: a length distribution (`256`, `uniform:64:256`) → `LengthDist`;
- the others, each a conversion with a message naming the flag: `loadgen.spec.codecs`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import fields
from pathlib import Path
from typing import ParamSpec, TypeVar

from loadgen.spec.codecs import CONVERSIONS, FieldValue, flagged_length
from loadgen.spec.options import OPTIONS, Option
from loadgen.spec.sections import (
    GateSpec,
    LoadSpec,
    MetricsSpec,
    OutputSpec,
    PrometheusSpec,
    RequestSpec,
    ScaleSpec,
    SpecError,
    TargetSpec,
    WorkloadSpec,
)
from loadgen.spec.values import OptionValue, OptionValues
from loadgen.types import Timeouts
from loadgen.workload import LengthDist, format_duration, parse_duration_flag

P = ParamSpec("P")
T = TypeVar("T")

# The derived options, in their declaration order.
DERIVED: tuple[Option, ...] = tuple(o for o in OPTIONS if o.spec)
# The RunSpec's sections by name: where a `spec` path may point.
SECTIONS: dict[str, type] = {
    "target": TargetSpec, "request": RequestSpec, "workload": WorkloadSpec, "load": LoadSpec, "scale": ScaleSpec,
    "timeouts": Timeouts, "metrics": MetricsSpec, "outputs": OutputSpec, "prometheus": PrometheusSpec,
    "gate": GateSpec,
}


def _in_field_order(section: str) -> tuple[tuple[Option, str], ...]:
    """A section's derived options with their fields, in the section's field order (the order build_spec has
    always parsed them in, so that of two bad values the same one is reported)."""
    names = [f.name for f in fields(SECTIONS[section])]
    found = [(o, o.spec.partition(".")[2]) for o in DERIVED if o.spec.partition(".")[0] == section]
    return tuple(sorted(found, key=lambda pair: names.index(pair[1]) if pair[1] in names else len(names)))


_BY_SECTION = {section: _in_field_order(section) for section in SECTIONS}


def section_values(v: OptionValues, section: str) -> dict[str, FieldValue]:
    """One spec section's derived fields (`load`, `workload`, ...) from the option values, keyed by field."""
    return {name: _parse(option, getattr(v, option.param)) for option, name in _BY_SECTION[section]}


def make(cls: Callable[P, T], derived: Mapping[str, FieldValue], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """`cls(**derived, **kwargs)`: a section from its derived fields and those written by hand (which mypy
    checks against `cls` as in a direct call)."""
    build: Callable[..., T] = cls
    return build(*args, **derived, **kwargs)


def derived_options(spec: object) -> dict[str, OptionValue]:
    """The derived options' values that give `spec` (a `RunSpec`) back, keyed by parameter."""
    out: dict[str, OptionValue] = {}
    for option in DERIVED:
        where, _, name = option.spec.partition(".")
        out[option.param] = _format(option, getattr(getattr(spec, where), name))
    return out


def _duration(value: str | None, flag: str, *, positive: bool = False) -> float | None:
    """A duration option's seconds (None when absent); the message names the flag."""
    if value is None:
        return None
    seconds = parse_duration_flag(str(value), flag)
    if positive and seconds <= 0:
        raise SpecError(f"{flag} must be greater than 0, got {value!r}")
    return seconds


def _required_duration(value: str | None, flag: str) -> float:
    seconds = _duration(value, flag)
    if seconds is None:
        raise SpecError(f"{flag} needs a value")
    return seconds


def _parse(option: Option, value: OptionValue) -> FieldValue:
    if (conversion := CONVERSIONS.get(option.codec)) is not None:
        field: FieldValue = conversion.parse(value, option.flag)
        return field
    if isinstance(value, list | tuple | Path):  # never: a path is held as its text, a list has its own code
        raise TypeError(f"{option.flag}: the {option.codec} codec takes one value, got {value!r}")
    codec = option.codec
    if codec == "copy":
        return value
    if codec == "or_none":
        return value or None
    if codec == "text":
        return value and str(value)
    text = None if value is None else str(value)
    if codec == "duration":
        return _required_duration(text, option.flag)
    if codec == "duration_or_none":
        return _duration(text, option.flag)
    if codec == "positive_duration":
        return _duration(text, option.flag, positive=True)
    if codec != "length":
        raise AssertionError(f"{option.flag}: no conversion for the {codec} codec")
    return flagged_length(value, option.flag)


def _format(option: Option, value: FieldValue) -> OptionValue:
    if (conversion := CONVERSIONS.get(option.codec)) is not None:
        return conversion.format(value)
    if isinstance(value, LengthDist) or option.codec == "length":
        return str(value)  # the user's own numbers: `uniform:64:256`, never `uniform:64.0:256.0`
    if value is not None and not isinstance(value, str | int | float):  # never: those are the codecs' own
        raise TypeError(f"{option.flag}: the {option.codec} codec gives one value, got {value!r}")
    if option.codec in ("copy", "or_none", "text") or value is None or isinstance(value, str):
        return value
    return format_duration(value)
