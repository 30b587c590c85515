"""Predicted against measured (`goodput predict --measured DIR`): for each measured point, the prediction at
its offered rate and the error of each figure, (predicted − measured) / measured in %; attainment's error in
percentage points; the capacity's in %. Nothing is compared where the two differ in a way that makes the
comparison meaningless (another SLO, another attainment target): that is said instead.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from exporters.html import slo_text
from loadgen.predict.measured import Measured, measured_capacity, workload_differences

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


def measured_figures(row: dict[str, Any]) -> dict[str, Any]:
    """A measured row's figures in predict.json's shape."""
    return {"latency_s": {m: {p: row.get(f"{m}_{p}_s") for p in PERCENTILES} for m in METRICS},
            "attainment": row.get("attainment"), "good": row.get("good"), "measured": row.get("measured"),
            "output_tokens_per_s": row.get("output_tokens_per_s"),
            "client_saturated": bool(row.get("client_saturated"))}


def point_comparison(row: dict[str, Any], predicted: dict[str, Any], *, attainment: bool) -> dict[str, Any]:
    """One measured point against the prediction at its rate (`attainment`: whether the SLOs match)."""
    measured = measured_figures(row)
    errors = {m: {p: error_pct(predicted["latency_s"][m][p], measured["latency_s"][m][p]) for p in PERCENTILES}
              for m in METRICS}
    return {"label": str(row.get("label")), "rate": row["rate"], "measured": measured,
            "predicted": {"latency_s": predicted["latency_s"], "attainment": predicted.get("attainment"),
                          "output_tokens_per_s": predicted.get("output_tokens_per_s")},
            "error_pct": errors,  # not of output tokens/s: the two are over different spans (see the page)
            "attainment_error_pp": points_diff(predicted.get("attainment"), measured["attainment"])
            if attainment else None}


def _slo_words(slo: Mapping[str, float]) -> str:
    return slo_text({"goodput": {"slo": dict(slo)}})


def compare(m: Measured, predicted: Mapping[float, dict[str, Any]], *, spec: dict[str, Any],
            slo: Mapping[str, float] | None, target: float, band: dict[str, float] | None) -> dict[str, Any]:
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
    out: dict[str, Any] = {
        "path": m.path, "label": m.label, "kind": m.kind, "workload_differences": differences, "notes": notes,
        "slo": dict(m.slo), "slo_compared": slo_ok,  # False: its attainment was judged by another SLO
        "points": [point_comparison(r, predicted[r["rate"]], attainment=slo_ok) for r in m.rows],
        "capacity": None,
    }
    found = measured_capacity(m, target) if band is not None else None
    if band is not None and found is not None:
        comparable = slo_ok and math.isclose(found["target"], target, rel_tol=1e-9)
        if slo_ok and not comparable:
            notes.append(f"{m.label} searched for {found['target']:.0%} attainment, the prediction for "
                         f"{target:.0%}: capacities not compared")
        out["capacity"] = {"measured": found, "predicted": dict(band),
                           "error_pct": error_pct(band["rate"], found["rate"]) if comparable else None,
                           "comparable": comparable}
    return out


def measured_rates(measured: list[Measured]) -> list[float]:
    """Every measured point's offered rate, once each."""
    return sorted({float(r["rate"]) for m in measured for r in m.rows})
