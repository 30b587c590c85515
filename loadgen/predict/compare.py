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
from metrics.results import (
    CapacityComparison,
    Json,
    MeasuredComparison,
    MeasuredFigures,
    PointComparison,
    PointRow,
    PredictedBand,
    PredictedPoint,
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


def compare(m: Measured, predicted: Mapping[float, PredictedPoint], *, spec: Mapping[str, Json],
            slo: Mapping[str, float] | None, target: float, band: PredictedBand | None) -> MeasuredComparison:
    """predict.json's entry for one --measured directory. `predicted`: the predicted points by rate (one at
    every measured rate); `spec`: the predicted run spec's JSON; `slo`: the predicted SLO's parts (None:
    none given); `band`: the predicted capacity (rate, low, high) when --capacity."""
    notes = list(m.notes)
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
