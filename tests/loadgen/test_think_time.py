"""Think-time draws against their distributions, worked out by hand: 20,000 draws from one seeded
generator, whose mean and quantiles must sit within a few standard errors of the formulas' values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from loadgen.workload.think import parse_think_time

N = 20_000
Z90 = 1.2815515655446004  # standard normal quantile at 0.9 (tables)


def _draws(text: str, seed: int = 12) -> np.ndarray:
    think = parse_think_time(text)
    rng = np.random.default_rng(seed)
    return np.array([think.sample(rng) for _ in range(N)])


def test_fixed_is_always_the_value() -> None:
    assert set(_draws("2s").tolist()) == {2.0}
    assert set(_draws("250ms").tolist()) == {0.25}


def test_exponential_mean_median_and_p90() -> None:
    # Exp with mean m: CDF 1 − exp(−t/m), so median m·ln 2 and p90 m·ln 10; the mean's standard error
    # is m/√N = 0.7 % of m, a quantile's about 1 %: 3 % is four to five of them.
    d = _draws("exponential:5s")
    assert d.min() >= 0
    assert d.mean() == pytest.approx(5.0, rel=0.03)
    assert np.median(d) == pytest.approx(5.0 * math.log(2), rel=0.03)
    assert np.quantile(d, 0.9) == pytest.approx(5.0 * math.log(10), rel=0.03)


def test_uniform_bounds_mean_and_quartiles() -> None:
    # U(0.5, 2): mean 1.25, quantile q at 0.5 + 1.5·q; every draw inside [0.5, 2].
    d = _draws("uniform:500ms:2s")
    assert d.min() >= 0.5 and d.max() <= 2.0
    assert d.mean() == pytest.approx(1.25, rel=0.01)
    for q in (0.25, 0.5, 0.75):
        assert np.quantile(d, q) == pytest.approx(0.5 + 1.5 * q, abs=0.02)


def test_lognormal_median_mean_and_p90() -> None:
    # exp(N(ln 3, 0.5²)): median 3, mean 3·exp(σ²/2) = 3·exp(0.125), p90 3·exp(0.5·z₀.₉).
    d = _draws("lognormal:3s:0.5")
    assert d.min() > 0
    assert np.median(d) == pytest.approx(3.0, rel=0.02)
    assert d.mean() == pytest.approx(3.0 * math.exp(0.125), rel=0.02)
    assert np.quantile(d, 0.9) == pytest.approx(3.0 * math.exp(0.5 * Z90), rel=0.03)
    assert np.std(np.log(d)) == pytest.approx(0.5, rel=0.03)
