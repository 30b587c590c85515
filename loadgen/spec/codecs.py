"""The conversions of the derived run options (loadgen.spec.derived) that are more than a cast or a duration:
each makes the spec field from the option's checked value, once, with a one-line error naming the flag, and
gives the value back from the field (what `--print-config` writes), so that `parse(format(field)) == field`.

- `length_or_none`: a length distribution (`--turns`), absent → None;
- `think_time`: a duration distribution (`2s`, `exponential:5s`) → `ThinkTime`;
- `numbers`: comma-separated numbers → a tuple of floats, empty → None (`--prefix-weights`);
- `edges`: comma-separated increasing non-negative integers → a tuple, absent → None (bucket edges);
- `pairs`: repeated KEY=VALUE → (key, value) pairs, a key given again keeping its first place, its last value;
- `strings`: a repeated option's items as a tuple (`--scrape`);
- `count_or_auto`: a whole number, or `auto` → None (`--workers`);
- `json_object`: a JSON object → its canonical text, empty → None (`--extra-body`);
- `fail_limit`: a share or a count of failed requests (loadgen.spec.fail_limit) → its canonical text;
- `slo`: the SLO's items (`ttft=500ms`) → `SLO`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from loadgen.spec.fail_limit import parse_fail_limit
from loadgen.spec.sections import SpecError
from loadgen.spec.values import OptionValue
from loadgen.workload import (
    LengthDist,
    ThinkTime,
    format_duration,
    parse_length,
    parse_think_time,
    plain_number,
)
from metrics import SLO, parse_slo

# A derived field's value in a spec section.
FieldValue = (str | int | float | bool | LengthDist | ThinkTime | SLO | tuple[float, ...] | tuple[int, ...]
              | tuple[str, ...] | tuple[tuple[str, str], ...] | None)
F = TypeVar("F", bound=FieldValue)


@dataclass(frozen=True, slots=True)
class Conversion(Generic[F]):
    """A codec: `parse(value, flag)` makes the field, `format(field)` gives the value back."""

    parse: Callable[[OptionValue, str], F]
    format: Callable[[F], OptionValue]


def _texts(value: OptionValue) -> list[str]:
    """A repeatable option's items (a tuple of strings once checked; none when absent)."""
    return [str(item) for item in value] if isinstance(value, list | tuple) else []


def key_values(values: Sequence[str], flag: str, sep: str) -> dict[str, str]:
    """KEY{sep}VALUE items as a mapping (keys and values stripped); SpecError naming `flag` for another item."""
    out: dict[str, str] = {}
    for item in values:
        key, found, val = str(item).partition(sep)
        if not found or not key.strip():
            raise SpecError(f"{flag} expects KEY{sep}VALUE, got {item!r}")
        out[key.strip()] = val.strip()
    return out


def _length_or_none(value: OptionValue, flag: str) -> LengthDist | None:
    return None if value is None else flagged_length(value, flag)


def flagged_length(value: OptionValue, flag: str) -> LengthDist:
    """A length distribution (`256`, `uniform:64:512`); SpecError led by the flag (`--turns: bad length ...`)."""
    try:
        return parse_length(str(value))
    except ValueError as exc:
        raise SpecError(f"{flag}: {exc}") from None


def _think_time(value: OptionValue, flag: str) -> ThinkTime:
    try:
        return parse_think_time(str(value), flag)
    except ValueError as exc:
        raise SpecError(str(exc)) from None


def _numbers(value: OptionValue, flag: str) -> tuple[float, ...] | None:
    if not value:
        return None
    try:
        return tuple(float(w) for w in str(value).split(","))
    except ValueError:
        raise SpecError(f"{flag} expects comma-separated numbers, got {value!r}") from None


def _edges(value: OptionValue, flag: str) -> tuple[int, ...] | None:
    if value is None:
        return None
    try:
        edges = tuple(int(x) for x in str(value).split(",") if x.strip())
    except ValueError:
        raise SpecError(f"{flag} expects comma-separated integers, got {value!r}") from None
    if not edges or list(edges) != sorted(set(edges)) or edges[0] < 0:
        raise SpecError(f"{flag} must be increasing non-negative integers, got {value!r}")
    return edges


def _count_or_auto(value: OptionValue, flag: str) -> int | None:
    text = str(value).strip().lower()
    if text == "auto":
        return None
    try:
        return int(text)
    except ValueError:
        raise SpecError(f"{flag} expects a number of {flag.lstrip('-')} or auto, got {value!r}") from None


def _json_object(value: OptionValue, flag: str) -> str | None:
    if not value:
        return None
    try:
        extra = json.loads(str(value))
    except json.JSONDecodeError as exc:
        raise SpecError(f"{flag} is not valid JSON: {exc.msg}") from None
    if not isinstance(extra, dict):
        raise SpecError(f"{flag} must be a JSON object")
    return json.dumps(extra, separators=(",", ":"), ensure_ascii=False) if extra else None


_SLO_KEYS = {"ttft_s": "ttft", "tpot_s": "tpot", "e2e_s": "e2e", "itl_max_s": "itl_max", "fluidity_min": "fluidity",
             "fluidity_prefill_deadline_s": "fluidity_prefill", "fluidity_decode_deadline_s": "fluidity_decode",
             "ttfo_s": "ttfo"}


def _slo_items(slo: SLO) -> list[str]:
    out = []
    for name, value in slo.to_dict().items():
        if value is not None:
            out.append(f"{_SLO_KEYS[name]}={value!r}" if name == "fluidity_min" else
                       f"{_SLO_KEYS[name]}={format_duration(value)}")
    return out


def _text_or_none(value: LengthDist | ThinkTime | None) -> str | None:
    return str(value) if value is not None else None  # a length: the user's own numbers, `uniform:64:256`


def _numbers_text(weights: tuple[float, ...] | None) -> str | None:
    return ",".join(map(plain_number, weights)) if weights is not None else None


def _edges_text(edges: tuple[int, ...] | None) -> str | None:
    return ",".join(map(str, edges)) if edges else None


def _pairs(value: OptionValue, flag: str) -> tuple[tuple[str, str], ...]:
    return tuple(key_values(_texts(value), flag, "=").items())


def _pairs_texts(items: tuple[tuple[str, str], ...]) -> list[str]:
    return [f"{key}={val}" for key, val in items]


def _strings(value: OptionValue, flag: str) -> tuple[str, ...]:
    return tuple(_texts(value))


def _strings_list(items: tuple[str, ...]) -> list[str]:
    return list(items)


def _count_text(count: int | None) -> str:
    return "auto" if count is None else str(count)


def _fail_limit(value: OptionValue, flag: str) -> str:
    return str(parse_fail_limit(value))


def _as_it_is(text: str | None) -> str | None:
    return text


def _slo(value: OptionValue, flag: str) -> SLO:
    try:
        return parse_slo(_texts(value))
    except ValueError as exc:
        raise SpecError(f"{flag}: {exc}") from None


CONVERSIONS: dict[str, Conversion[Any]] = {
    "length_or_none": Conversion(_length_or_none, _text_or_none),
    "think_time": Conversion(_think_time, str),
    "numbers": Conversion(_numbers, _numbers_text),
    "edges": Conversion(_edges, _edges_text),
    "pairs": Conversion(_pairs, _pairs_texts),
    "strings": Conversion(_strings, _strings_list),
    "count_or_auto": Conversion(_count_or_auto, _count_text),
    "json_object": Conversion(_json_object, _as_it_is),
    "fail_limit": Conversion(_fail_limit, _as_it_is),
    "slo": Conversion(_slo, _slo_items),
}
