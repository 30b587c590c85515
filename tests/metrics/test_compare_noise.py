"""`compare_runs` against run-to-run noise, on synthetic runs with known distributions: a whole run shifted
the way a busy machine shifts it is not a regression once repeated baseline runs show that spread; a
consistent +50 % TTFT is; and changes under the minimum practical size are not flagged."""

from __future__ import annotations

import numpy as np
import pytest

from metrics.gate.compare import Row, compare_runs
from metrics.gate.compare_rule import BELOW_MIN_CHANGE, WITHIN_RUN_SPREAD
from metrics.gate.run_samples import RunSamples
from metrics.records.frame import frame_from_records
from metrics.slo import parse_slo
from metrics.summary.build import SummaryConfig
from tests.metrics._records import rec

CONFIG = SummaryConfig(slo=parse_slo(["ttft=300ms"]))
STATS = ["ttft:p(50)", "ttft:avg", "itl:p(50)"]


def _run(*, seed: int, scale: float = 1.0, n: int = 200, ttft_ms: float = 100.0) -> RunSamples:
    """One run of a configuration whose TTFT is lognormal (median `ttft_ms`), the whole run scaled by
    `scale` — the shift a busier or quieter machine gives every request of a run. ITL is not scaled."""
    rng = np.random.default_rng(seed)
    records = []
    for i in range(n):
        a = 50.0 * i
        first = a + float(rng.lognormal(np.log(ttft_ms), 0.3)) * scale
        chunks = list(first + np.concatenate(([0.0], np.cumsum(rng.gamma(4.0, 2.5, 7)))))
        records.append(rec(i, a=a, d=a, chunks=chunks, closed=chunks[-1] + 1, prompt_tokens=100,
                           prompt_tokens_estimated=False, cached_tokens=0))
    return RunSamples(frame_from_records(records), CONFIG)


def _row(rows: list[Row], stat: str) -> Row:
    return next(r for r in rows if r.scope == "all" and r.query.describe() == stat)


def test_a_run_shifted_like_a_busy_machine_is_not_flagged_against_repeated_baselines() -> None:
    # Four baseline runs of one configuration, each shifted as a whole by up to +55 % (the size seen
    # between two identical runs on a busy 2-core machine), and a candidate of the same configuration
    # shifted +55 % like the second of them.
    bases = [_run(seed=10 + i, scale=f) for i, f in enumerate([1.0, 1.55, 1.15, 0.95])]
    twin = _run(seed=20, scale=1.55)
    # Against the first baseline alone, the bootstrap over requests sees a real difference between the
    # two runs and flags it: it cannot know that whole runs move like this.
    alone = compare_runs(bases[:1], twin, STATS, resamples=500, buckets=False)
    assert _row(alone, "ttft:p(50)").flag == "regression" and _row(alone, "ttft:p(50)").spread is None
    # With the repeated baselines, the same change lies inside their run-to-run spread.
    rows = compare_runs(bases, twin, STATS, resamples=500, buckets=False)
    assert [r.flag for r in rows] == ["", "", ""]
    ttft = _row(rows, "ttft:p(50)")
    assert ttft.ci is not None and ttft.ci[0] > 0  # significant against sampling noise alone ...
    assert ttft.why == WITHIN_RUN_SPREAD and ttft.spread is not None and abs(ttft.delta or 0) <= ttft.spread
    assert len(ttft.base_runs) == 4 and ttft.base == pytest.approx(np.mean(ttft.base_runs))
    assert ttft.base_n == 800 and ttft.cand_n == 200


def test_a_consistent_regression_is_flagged_against_repeated_baselines() -> None:
    bases = [_run(seed=30 + i, scale=f) for i, f in enumerate([1.0, 1.04, 0.97, 1.02])]
    cand = _run(seed=40, scale=1.5)
    rows = compare_runs(bases, cand, STATS, resamples=500, buckets=False)
    ttft = _row(rows, "ttft:p(50)")
    assert ttft.flag == "regression" and ttft.relative is not None and ttft.relative > 0.3
    assert ttft.spread is not None and (ttft.delta or 0) > ttft.spread
    assert _row(rows, "ttft:avg").flag == "regression"
    assert _row(rows, "itl:p(50)").flag == ""  # the gaps did not change
    back = compare_runs([cand, _run(seed=41, scale=1.5), _run(seed=42, scale=1.48)], bases[0], STATS,
                        resamples=500, buckets=False)
    assert _row(back, "ttft:p(50)").flag == "improvement"


def _false_and_true_flags(trials: int, *, run_sigma: float, effect: float, seed: int) -> dict[int, int]:
    """How many of `trials` comparisons flag ttft or e2e p50, with one and with four baseline runs, when
    every run's scale is lognormal(0, run_sigma) and the candidate is also multiplied by `effect`."""
    rng = np.random.default_rng(seed)
    flagged = {1: 0, 4: 0}
    for trial in range(trials):
        scales = np.exp(rng.normal(0.0, run_sigma, 5))
        runs = [_run(seed=1000 * seed + 10 * trial + j, scale=float(s), n=150) for j, s in enumerate(scales)]
        cand = _run(seed=1000 * seed + 10 * trial + 9, scale=float(scales[4]) * effect, n=150)
        for k in flagged:
            rows = compare_runs(runs[:k], cand, ["ttft:p(50)", "e2e:p(50)"], resamples=200, buckets=False)
            flagged[k] += any(r.flag for r in rows)
    return flagged


@pytest.mark.slow  # tens of compares of 150-3000 requests: seconds each
def test_run_to_run_noise_rarely_flags_with_repeated_baselines() -> None:
    # Runs of one configuration whose scale varies ±25 % from run to run: with one baseline most
    # comparisons flag something; with four, about the 5 % the confidence allows.
    flagged = _false_and_true_flags(30, run_sigma=0.25, effect=1.0, seed=1)
    assert flagged[1] >= 10
    assert flagged[4] <= 3


@pytest.mark.slow  # tens of compares of 150-3000 requests: seconds each
def test_a_real_regression_is_found_through_modest_run_to_run_noise() -> None:
    flagged = _false_and_true_flags(15, run_sigma=0.04, effect=1.5, seed=2)
    assert flagged[4] >= 14 and flagged[1] == 15


@pytest.mark.slow  # tens of compares of 150-3000 requests: seconds each
def test_changes_below_the_minimum_are_not_flagged() -> None:
    base, cand = _run(seed=50, n=3000), _run(seed=51, n=3000, scale=1.03)
    [row] = compare_runs(base, cand, ["ttft:avg"], resamples=300, buckets=False)
    assert row.ci is not None and row.ci[0] > 0  # a real +3 %, measured precisely ...
    assert row.flag == "" and row.why == BELOW_MIN_CHANGE  # ... but under the default 5 %
    [row] = compare_runs(base, cand, ["ttft:avg"], resamples=300, buckets=False, min_change=0.02)
    assert row.flag == "regression"
    # An absolute floor for durations: +30 % of a 2 ms TTFT is 0.6 ms, under the default 1 ms.
    fast, slower = _run(seed=52, ttft_ms=2.0), _run(seed=53, ttft_ms=2.0, scale=1.3)
    [row] = compare_runs(fast, slower, ["ttft:p(50)"], resamples=300, buckets=False)
    assert row.ci is not None and row.ci[0] > 0 and row.why == BELOW_MIN_CHANGE
    [row] = compare_runs(fast, slower, ["ttft:p(50)"], resamples=300, buckets=False, min_change_abs=0.0)
    assert row.flag == "regression"


def test_buckets_must_be_measured_in_every_run() -> None:
    bases = [_run(seed=60), _run(seed=61)]
    rows = compare_runs(bases, _run(seed=62), ["ttft:p(50)"], resamples=200)
    assert {r.scope for r in rows} == {"all"}  # one prompt size, one cache class: no bucket rows
    with pytest.raises(ValueError, match="at least one baseline"):
        compare_runs([], bases[0])
    with pytest.raises(ValueError, match="must not be negative"):
        compare_runs(bases, bases[0], min_change=-0.1)
