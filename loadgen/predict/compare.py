"""Predicted against measured (`goodput predict --measured DIR`): for each measured point, the prediction at
its offered rate and the error of each figure, (predicted − measured) / measured in %; attainment's error in
percentage points; the capacity's in %. Nothing is compared where the two differ in a way that makes the
comparison meaningless (another SLO, another attainment target): that is said instead.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from exporters.html import slo_text
from loadgen.predict.measured import Measured, measured_capacity, workload_differences
from loadgen.workload import format_duration
from metrics.results import (
    CapacityComparison,
    Json,
    MeasuredComparison,
    MeasuredFigures,
    PointComparison,
    PointRow,
    PredictedBand,
    PredictedPoint,
    float_or_none,
    object_or_empty,
)

METRICS = ("ttft", "tpot", "e2e")
PERCENTILES = ("p50", "p90", "p99")


def error_pct(predicted: float | None, measured: float | None) -> float | None:
    """(predicted − measured) / measured × 100; None when either is missing or the measured one is 0."""
    if predicted is None or measured is None or measured == 0 or not math.isfinite(predicted + measured):
        return None
    return (predicted - measured) / measured * 100.0


def points_diff(predicted: float | None, measured: float | None) -> float | None:
    """An attainment's error in percentage points: (predicted − measured) × 100."""
    if predicted is None or measured is None:
        return None
    return (predicted - measured) * 100.0


def same_slo(a: Mapping[str, float], b: Mapping[str, float]) -> bool:
    return a.keys() == b.keys() and all(math.isclose(a[k], b[k], rel_tol=1e-9) for k in a)


def measured_figures(row: PointRow) -> MeasuredFigures:
    """A measured row's figures in predict.json's shape."""
    return MeasuredFigures({m: {p: row.percentile(m, p) for p in PERCENTILES} for m in METRICS}, row.attainment,
                           row.good, row.measured, row.output_tokens_per_s, bool(row.client_saturated))


def point_comparison(row: PointRow, predicted: PredictedPoint, *, attainment: bool) -> PointComparison:
    """One measured point against the prediction at its rate (`attainment`: whether the SLOs match)."""
    measured = measured_figures(row)
    errors = {m: {p: error_pct(predicted.latency_s[m][p], measured.latency_s[m][p]) for p in PERCENTILES}
              for m in METRICS}
    # no error of output tokens/s: the two are over different spans (see the page)
    return PointComparison(row.label, row.rate or 0.0, measured, predicted.latency_s, predicted.attainment,
                           predicted.output_tokens_per_s, errors,
                           points_diff(predicted.attainment, measured.attainment) if attainment else None)


def _slo_words(slo: Mapping[str, float]) -> str:
    return slo_text(slo)


Length = tuple[float | None, float | None, float]  # duration_s, requests, warmup_s


def run_length(spec: Mapping[str, Json]) -> Length | None:
    """How long a run spec's load ran: its duration, request count and warm-up (None: no load recorded)."""
    load = object_or_empty(spec.get("load"))
    if not load:
        return None
    return (float_or_none(load.get("duration_s")), float_or_none(load.get("requests")),
            float_or_none(load.get("warmup_s")) or 0.0)


def length_text(length: Length) -> str:
    """`30s with a 3s warm-up`, `100 requests`, `20s or 100 requests, whichever ends first`."""
    duration, requests, warmup = length
    parts = [format_duration(duration)] if duration is not None else []
    parts += [f"{requests:g} requests"] if requests is not None else []
    text = " or ".join(parts) + (", whichever ends first" if len(parts) == 2 else "")
    return text + (f" with a {format_duration(warmup)} warm-up" if warmup > 0 else "")


def length_note(m: Measured, spec: Mapping[str, Json]) -> str | None:
    """A line when the measured runs and the predicted ones differ in length or warm-up: past the rate the
    server sustains, the queue grows with the window, so the window sets latency, attainment and capacity."""
    measured, predicted = run_length(m.spec), run_length(spec)
    if measured is None or predicted is None or all(
            a == b or (a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9))
            for a, b in zip(measured, predicted, strict=True)):
        return None
    what = "each point" if m.kind != "run" else "the run"
    hint = f" (--point-duration {format_duration(measured[0])} predicts its points)" \
        if m.kind != "run" and measured[0] is not None and measured[1] is None else ""
    return (f"{m.label}: {what} ran {length_text(measured)}, each predicted rate {length_text(predicted)}: past "
            f"the rate a server sustains its queue grows with the window{hint}")


def compare(m: Measured, predicted: Mapping[float, PredictedPoint], *, spec: Mapping[str, Json],
            slo: Mapping[str, float] | None, target: float, band: PredictedBand | None) -> MeasuredComparison:
    """predict.json's entry for one --measured directory. `predicted`: the predicted points by rate (one at
    every measured rate); `spec`: the predicted run spec's JSON; `slo`: the predicted SLO's parts (None:
    none given); `band`: the predicted capacity (rate, low, high) when --capacity."""
    notes = list(m.notes)
    if (length := length_note(m, spec)) is not None:
        notes.append(length)
    differences = workload_differences(spec, m.spec) if m.spec else []
    if not m.spec:
        notes.append(f"{m.label}'s run.json records no run spec: its workload could not be checked against the "
                     "predicted one")
    slo_ok = slo is not None and same_slo(slo, m.slo)
    if slo is not None and not slo_ok:
        notes.append(f"{m.label} judged its requests by another SLO ({_slo_words(m.slo)}; predicted: "
                     f"{_slo_words(slo)}): attainment and capacity are not compared")
    if m.ignore_eos is False:
        notes.append(f"{m.label} did not ask for exactly max_tokens (no --ignore-eos): a request may have ended "
                     "early, where the prediction runs every request to its max tokens")
    points = tuple(point_comparison(r, predicted[r.rate or 0.0], attainment=slo_ok) for r in m.rows)
    capacity = None
    found = measured_capacity(m, target) if band is not None else None
    if band is not None and found is not None:
        comparable = slo_ok and math.isclose(found.target, target, rel_tol=1e-9)
        if slo_ok and not comparable:
            notes.append(f"{m.label} searched for {found.target:.0%} attainment, the prediction for "
                         f"{target:.0%}: capacities not compared")
        capacity = CapacityComparison(found, band, error_pct(band.rate, found.rate) if comparable else None,
                                      comparable)
    return MeasuredComparison(m.path, m.label, m.kind, tuple(differences), tuple(notes), dict(m.slo), slo_ok, points,
                              capacity)


def measured_rates(measured: list[Measured]) -> list[float]:
    """Every measured point's offered rate, once each."""
    return sorted({float(r.rate or 0.0) for m in measured for r in m.rows})
