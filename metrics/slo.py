"""Service-level objectives and the DistServe goodput test of one request.

A request is *good* iff it finished with status "ok", delivered at least one content chunk, and meets
every SLO that was given (any subset; bounds are inclusive):

    TTFT ≤ ttft_s    TPOT ≤ tpot_s (only when N ≥ 2)    E2E ≤ e2e_s
    max ITL ≤ itl_max_s (only with ≥ 2 chunks)    fluidity index ≥ fluidity_min
    TTFO ≤ ttfo_s (time to the first answer token or tool call; a request that never answered misses it)

A TPOT below metrics.burst.BURST_TPOT_S (a burst-delivered stream) never meets a TPOT bound: it
measures the delivery of output that was already made, not decoding.

Failed, timed-out and cancelled requests are never good and stay in the denominator of attainment.

`parse_slo` reads the CLI form, one `key=value` per item (items may also be comma-separated):
`ttft=500ms`, `tpot=50ms`, `e2e=10s`, `itl_max=200ms`, `fluidity=0.9`, `ttfo=2s`, and the fluidity deadlines
`fluidity_prefill=500ms`, `fluidity_decode=50ms` (D_p and D_d; when absent they default to the ttft and
tpot SLOs). Durations take ms, us or s; a bare number is seconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, NotRequired, TypedDict

from metrics.units import parse_duration

if TYPE_CHECKING:  # numpy stays out of the CLI's import path (`parse_slo` runs before any work)
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float64]
    BoolArray = npt.NDArray[np.bool_]

# CLI key → SLO field; durations unless listed in _FRACTIONS.
_KEYS: dict[str, str] = {
    "ttft": "ttft_s",
    "ttfo": "ttfo_s",
    "tpot": "tpot_s",
    "e2e": "e2e_s",
    "itl_max": "itl_max_s",
    "max_itl": "itl_max_s",
    "fluidity": "fluidity_min",
    "fluidity_prefill": "fluidity_prefill_deadline_s",
    "fluidity_prefill_deadline": "fluidity_prefill_deadline_s",
    "fluidity_decode": "fluidity_decode_deadline_s",
    "fluidity_decode_deadline": "fluidity_decode_deadline_s",
}
_FRACTIONS = frozenset({"fluidity_min"})


@dataclass(frozen=True, slots=True)
class SLO:
    """Latency bounds in seconds and a minimum fluidity index; None = not part of the SLO."""

    ttft_s: float | None = None
    tpot_s: float | None = None
    e2e_s: float | None = None
    itl_max_s: float | None = None
    fluidity_min: float | None = None
    fluidity_prefill_deadline_s: float | None = None
    fluidity_decode_deadline_s: float | None = None
    ttfo_s: float | None = None  # last: summary.json leaves it out when not set (slo_summary)

    def fluidity_deadlines(self) -> tuple[float, float] | None:
        """(D_p, D_d) when fluidity is asked for (a `fluidity` bound or an explicit deadline): the explicit
        deadlines, else the ttft / tpot bounds. None when not asked for or not known: fluidity walks
        every token of the run, so a run that does not want it does not pay for it."""
        asked = (self.fluidity_min is not None or self.fluidity_prefill_deadline_s is not None
                 or self.fluidity_decode_deadline_s is not None)
        if not asked:
            return None
        prefill = self.fluidity_prefill_deadline_s if self.fluidity_prefill_deadline_s is not None else self.ttft_s
        decode = self.fluidity_decode_deadline_s if self.fluidity_decode_deadline_s is not None else self.tpot_s
        if prefill is None or decode is None:
            return None
        return prefill, decode

    def to_dict(self) -> dict[str, float | None]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def parse_slo(specs: Sequence[str], *, base: SLO | None = None) -> SLO:
    """An SLO from CLI items such as `["ttft=500ms", "tpot=50ms,fluidity=0.9"]`, on top of `base` (an SLO
    parsed from another source, e.g. a config file: a key it sets may not be given again).

    Raises ValueError with a message fit to show the user (unknown key, bad value, repeated key,
    fluidity without deadlines). Text becomes an SLO here, once, where it enters (docs/architecture.md).
    """
    values = {k: v for k, v in (base.to_dict() if base is not None else {}).items() if v is not None}
    for spec in specs:
        for item in spec.split(","):
            item = item.strip()
            if not item:
                continue
            key, sep, raw = item.partition("=")
            key = key.strip().lower()
            if not sep or not raw.strip():
                raise ValueError(f"invalid SLO {item!r}: expected key=value, e.g. ttft=500ms")
            if key not in _KEYS:
                raise ValueError(f"unknown SLO key {key!r} in {item!r}: expected one of {', '.join(_KEYS)}")
            name = _KEYS[key]
            if name in values:
                raise ValueError(f"SLO {key!r} given twice")
            values[name] = _parse_value(name, key, raw.strip())
    slo = SLO(**values)
    if slo.fluidity_min is not None and slo.fluidity_deadlines() is None:
        raise ValueError(
            "fluidity SLO needs per-token deadlines: add fluidity_prefill=... and fluidity_decode=... "
            "(or ttft=... and tpot=..., which they default to)"
        )
    return slo


def slo_field(item: str) -> str | None:
    """The SLO field one `key=value` item sets (`max_itl=1s` and `itl_max=1s` both set itl_max_s), without
    judging its value; None when the key is not an SLO key. Merging two sources item by item needs it: an
    item may be valid only beside others (a fluidity bound needs its deadlines)."""
    return _KEYS.get(item.partition("=")[0].strip().lower())


def _parse_value(name: str, key: str, raw: str) -> float:
    if name in _FRACTIONS:
        try:
            value = float(raw)
        except ValueError:
            raise ValueError(f"invalid SLO {key}={raw!r}: expected a number between 0 and 1, e.g. 0.9") from None
        if not 0.0 < value <= 1.0:
            raise ValueError(f"invalid SLO {key}={raw!r}: must be in (0, 1]")
        return value
    try:
        value = parse_duration(raw)
    except ValueError as exc:
        raise ValueError(f"invalid SLO {key}={raw!r}: {exc}") from None
    if value <= 0:
        raise ValueError(f"invalid SLO {key}={raw!r}: must be > 0")
    return value


def good_requests(
    slo: SLO,
    *,
    ok_with_content: BoolArray,
    ttft_s: FloatArray,
    tpot_s: FloatArray,
    e2e_s: FloatArray,
    max_itl_s: FloatArray,
    fluidity: FloatArray,
    ttfo_s: FloatArray | None = None,
) -> BoolArray:
    """Which requests are good (see the module docstring); NaN metrics are 'not applicable', except TTFT
    and TTFO: a request with no first (answer) token never meets their bound. `ttfo_s` is needed only
    with a TTFO bound (metrics.latency.answer.ttfo_s)."""
    import numpy as np
    good = ok_with_content.copy()
    if slo.ttft_s is not None:
        good &= ttft_s <= slo.ttft_s
    if slo.ttfo_s is not None:
        if ttfo_s is None:
            raise ValueError("a TTFO SLO needs the requests' TTFO")
        good &= ttfo_s <= slo.ttfo_s
    if slo.e2e_s is not None:
        good &= e2e_s <= slo.e2e_s
    if slo.tpot_s is not None:
        from metrics.burst import burst_delivered
        good &= np.isnan(tpot_s) | ((tpot_s <= slo.tpot_s) & ~burst_delivered(tpot_s))
    if slo.itl_max_s is not None:
        good &= np.isnan(max_itl_s) | (max_itl_s <= slo.itl_max_s)
    if slo.fluidity_min is not None:
        good &= np.isnan(fluidity) | (fluidity >= slo.fluidity_min)
    return good


class SloBounds(TypedDict):
    ttft_s: float | None
    tpot_s: float | None
    e2e_s: float | None
    itl_max_s: float | None
    fluidity_min: float | None
    fluidity_prefill_deadline_s: float | None
    fluidity_decode_deadline_s: float | None
    ttfo_s: NotRequired[float]  # newer than the others: absent when not set, so older summaries read the same


class SloSection(SloBounds):
    """summary.json's `goodput.slo`."""

    fluidity_deadlines_s: list[float] | None  # (D_p, D_d) used, None when fluidity was not computed


def slo_summary(slo: SLO) -> SloSection:
    """The `goodput.slo` entry: every bound, set or not, and the fluidity deadlines actually used."""
    bounds: SloBounds = {
        "ttft_s": slo.ttft_s, "tpot_s": slo.tpot_s, "e2e_s": slo.e2e_s, "itl_max_s": slo.itl_max_s,
        "fluidity_min": slo.fluidity_min, "fluidity_prefill_deadline_s": slo.fluidity_prefill_deadline_s,
        "fluidity_decode_deadline_s": slo.fluidity_decode_deadline_s,
    }
    if slo.ttfo_s is not None:
        bounds["ttfo_s"] = slo.ttfo_s
    deadlines = slo.fluidity_deadlines()
    return {**bounds, "fluidity_deadlines_s": list(deadlines) if deadlines else None}
