"""Fitting the step-time model (loadgen.predict.step_model) to measured engine steps by least squares.

`fit_steps` solves step_s ≈ X·θ over the steps of every run (loadgen.predict.steps), with any parameter
pinned by the user (`fixed`), keeping every parameter ≥ 0 (a negative one is pinned at 0 and the rest
refitted). Each fitted parameter gets its standard error, σ̂·sqrt(diag((XᵀX)⁻¹)) with σ̂² = RSS / (n − k).
`fit_overlapped` fits the overlapped form (max of memory and compute): given which side each step's
time follows, the form is linear, so it alternates fitting and re-assigning sides until they settle.
`fit_best` fits both forms and keeps the one with the smaller residual. `IdentifyError` says which parameters the steps cannot tell apart (a column that is zero or in the span
of the others) or that there are too few steps: the caller refuses rather than guesses.

An `Aggregate` is one more row: a mean the server measured over steps the chunk times place but do not
time (loadgen.predict.server_check: a run's mean prefill time). Its row is the mean of its steps' rows
per request, weighted √s for the s distinct steps its requests' prefills span: requests of one burst share
their prefill steps, so the mean is as good as those s steps' observations, not as n independent ones (a
run of 400 requests whose prefills ran in 150 steps weighs as much as 150 steps). The residual RMS is the
steps' only, and `Fit.points` counts the steps, `Fit.rows` the aggregates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from loadgen.predict.fit_json import FitJson, RunFit
from loadgen.predict.step_model import COMPUTE, PARAMS, SchedulerLimits, StepFeatures, StepModel, model_of
from loadgen.predict.steps import Step

MIN_EXTRA_POINTS = 3  # steps beyond the number of fitted parameters


class IdentifyError(ValueError):
    """The steps cannot identify a parameter (`names`: which; empty when there are too few steps)."""

    def __init__(self, message: str, names: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.names = names


@dataclass(frozen=True, slots=True)
class Aggregate:
    """`mean_s` ≈ Σ of the modelled times of `members` / `requests` (see the module docstring)."""

    members: tuple[StepFeatures, ...]
    requests: int
    mean_s: float
    steps: int  # distinct steps among the members: the row's weight is √steps


@dataclass(frozen=True, slots=True)
class Fit:
    values: dict[str, float]
    std_err: dict[str, float]
    residual_rms_s: float
    points: int  # measured steps
    overlap: bool = False
    rows: int = 0  # aggregate rows (server means) beside the steps


def all_features(steps: list[Step], aggregates: tuple[Aggregate, ...] = ()) -> list[StepFeatures]:
    """The steps' features, then every aggregate's members: what `sides` lists a side for, in order."""
    return [s.features for s in steps] + [f for a in aggregates for f in a.members]


def design(steps: list[Step], sides: list[str] | None = None,
           aggregates: tuple[Aggregate, ...] = ()) -> tuple[np.ndarray, np.ndarray]:
    feats = all_features(steps, aggregates)
    rows = [f.row(sides[i] if sides is not None else None) for i, f in enumerate(feats)]
    x = np.array(rows[:len(steps)], dtype=np.float64).reshape(len(steps), len(PARAMS))
    y = np.array([s.duration_s for s in steps], dtype=np.float64)
    at = len(steps)
    for a in aggregates:
        block = np.array(rows[at:at + len(a.members)], dtype=np.float64).reshape(len(a.members), len(PARAMS))
        at += len(a.members)
        weight = np.sqrt(a.steps)
        x = np.vstack([x, block.sum(axis=0) / a.requests * weight])
        y = np.append(y, a.mean_s * weight)
    return x, y


def unidentified(x: np.ndarray) -> list[int]:
    """Columns of x that are zero or a combination of the others (scaled to unit norm first)."""
    norms = np.linalg.norm(x, axis=0)
    if x.shape[1] == 0:
        return []
    zero = [j for j in range(x.shape[1]) if norms[j] == 0]
    xs = x / np.where(norms == 0, 1.0, norms)
    rank = np.linalg.matrix_rank(xs, tol=1e-8 * max(xs.shape))
    if rank == x.shape[1]:
        return []
    return sorted(set(zero) | {j for j in range(x.shape[1])
                               if np.linalg.matrix_rank(np.delete(xs, j, axis=1), tol=1e-8 * max(xs.shape)) == rank})


def fit_steps(steps: list[Step], fixed: dict[str, float] | None = None, sides: list[str] | None = None,
              lower: dict[str, float] | None = None, aggregates: tuple[Aggregate, ...] = ()) -> Fit:
    """The additive form (sides None: memory_s is pinned at 0, part of fixed_s) or the overlapped one.
    `lower`: lower bounds (default 0); a parameter the steps cannot identify is held at a bound above 0
    when it has one, else the fit is refused."""
    pinned = dict(fixed or {})
    bound = dict(lower or {})
    if sides is None:
        pinned["memory_s"] = 0.0
    x_all, y_all = design(steps, sides, aggregates)
    while True:
        free = [j for j, name in enumerate(PARAMS) if name not in pinned]
        offset = sum(x_all[:, j] * pinned[name] for j, name in enumerate(PARAMS) if name in pinned)
        x, y = x_all[:, free], y_all - offset
        if len(steps) < len(free) + MIN_EXTRA_POINTS:
            raise IdentifyError(f"{len(steps)} measured engine steps cannot fit {len(free)} parameters "
                                f"(need at least {len(free) + MIN_EXTRA_POINTS}): run longer or at more rates")
        bad = unidentified(x)
        if bad and all(bound.get(PARAMS[free[j]], 0.0) > 0 for j in bad):
            pinned.update({PARAMS[free[j]]: bound[PARAMS[free[j]]] for j in bad})
            continue
        if bad:
            names = ", ".join(PARAMS[free[j]] for j in bad)
            raise IdentifyError(f"the runs cannot tell apart {names}: vary what they depend on (prompt lengths, "
                                f"rates) or pin one with --fix NAME=VALUE", tuple(PARAMS[free[j]] for j in bad))
        theta, *_ = np.linalg.lstsq(x, y, rcond=None)
        below = [j for j in range(len(free)) if theta[j] < bound.get(PARAMS[free[j]], 0.0)]
        if not below:
            break
        worst = min(below, key=lambda j: theta[j] - bound.get(PARAMS[free[j]], 0.0))
        pinned[PARAMS[free[worst]]] = bound.get(PARAMS[free[worst]], 0.0)
    resid = y - x @ theta
    dof = max(1, len(y) - len(free))
    sigma2 = float(resid @ resid) / dof
    cov = sigma2 * np.linalg.inv(x.T @ x)
    values = {**pinned, **{PARAMS[j]: float(theta[i]) for i, j in enumerate(free)}}
    std = {PARAMS[j]: float(np.sqrt(max(cov[i, i], 0.0))) for i, j in enumerate(free)}
    step_resid = resid[:len(steps)]
    return Fit(values, std, float(np.sqrt(np.mean(step_resid**2))) if len(steps) else 0.0, len(steps),
               sides is not None, len(aggregates))


def fit_overlapped(steps: list[Step], fixed: dict[str, float] | None = None, max_rounds: int = 30,
                   lower: dict[str, float] | None = None, aggregates: tuple[Aggregate, ...] = ()) -> Fit:
    """Start with prefill steps on the compute side, then re-assign each step to its longer side."""
    feats = all_features(steps, aggregates)
    sides = ["compute" if f.prefill_tokens > 0 else "memory" for f in feats]
    fit = fit_steps(steps, fixed, sides, lower, aggregates)
    for _ in range(max_rounds):
        model = model_of(fit.values, overlap=True)
        new = [model.side(f) for f in feats]
        if new == sides:
            break
        sides = new
        fit = fit_steps(steps, fixed, sides, lower, aggregates)
    return fit


def fit_best(steps: list[Step], fixed: dict[str, float] | None = None,
             lower: dict[str, float] | None = None,
             aggregates: tuple[Aggregate, ...] = ()) -> tuple[Fit, dict[str, float]]:
    """The form with the smaller residual (the additive one when the overlapped cannot be identified), and
    each form's residual RMS. Compute bounds (prefill_s, decode_seq_s) hold only in the overlapped form:
    in the additive one a token's compute partly hides under the weights' read that fixed_s holds."""
    bounds = dict(lower or {})
    additive = fit_steps(steps, fixed, None, {k: v for k, v in bounds.items() if k not in COMPUTE}, aggregates)
    rms = {"additive": additive.residual_rms_s}
    try:
        overlapped = fit_overlapped(steps, fixed, lower=bounds, aggregates=aggregates)
    except IdentifyError:
        return additive, rms
    rms["overlapped"] = overlapped.residual_rms_s
    return (overlapped if overlapped.residual_rms_s < additive.residual_rms_s else additive), rms


def prefill_unidentified(steps: list[Step], fixed: dict[str, float] | None = None) -> list[str]:
    """prefill_s and prefill_ctx_s, those not pinned, that the steps alone cannot identify (judged on the
    additive form's design): the parameters the server's prefill-time rows are added for."""
    if not steps:
        return []
    pinned = set(fixed or {}) | {"memory_s"}
    free = [j for j, name in enumerate(PARAMS) if name not in pinned]
    x, _ = design(steps)
    return [PARAMS[free[j]] for j in unidentified(x[:, free]) if PARAMS[free[j]] in ("prefill_s", "prefill_ctx_s")]


def residuals_by_run(model: StepModel, runs: dict[str, list[Step]]) -> dict[str, RunFit]:
    """Per run: steps, mean measured step, and the RMS and mean of measured − predicted (seconds)."""
    out: dict[str, RunFit] = {}
    for name, steps in runs.items():
        if not steps:
            continue
        measured = np.array([s.duration_s for s in steps])
        predicted = np.array([model.step_s(s.features) for s in steps])
        r = measured - predicted
        out[name] = {"steps": float(len(steps)), "mean_step_s": float(measured.mean()),
                     "rms_residual_s": float(np.sqrt(np.mean(r**2))), "mean_residual_s": float(r.mean())}
    return out


def build_model(fit: Fit, limits: SchedulerLimits, runs: dict[str, list[Step]], sources: list[str],
                forms_rms_s: dict[str, float] | None = None) -> StepModel:
    model = model_of(fit.values, overlap=fit.overlap, limits=limits, std_err=fit.std_err)
    info: FitJson = {"sources": sources, "points": fit.points, "aggregate_rows": fit.rows,
                     "residual_rms_s": fit.residual_rms_s,
                     "form": "overlapped" if fit.overlap else "additive",
                     "forms_residual_rms_s": forms_rms_s or {},
                     "pinned": sorted(set(PARAMS) - set(fit.std_err)), "runs": residuals_by_run(model, runs)}
    return model_of(fit.values, overlap=fit.overlap, limits=limits, std_err=fit.std_err, fit=info)
