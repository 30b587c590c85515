"""The length grammar `goodput run` and the reference server share (`--prompt-tokens`, `--output-tokens`,
`--turns`, `goodput serve --reasoning-tokens`): `N`, `uniform:LO:HI`, `normal:MEAN:STD` or
`lognormal:MEDIAN:SIGMA`. Parsed here once; each side builds its own distribution from the parts."""

from __future__ import annotations

import math

LENGTH_KINDS = ("fixed", "uniform", "normal", "lognormal")


def parse_length_spec(spec: str) -> tuple[str, float, float]:
    """(kind, a, b) of a length spec (b is 0 for a fixed N); ValueError with a one-line reason."""
    parts = spec.strip().split(":")
    try:
        if len(parts) == 1:
            value = float(parts[0])
            if not math.isfinite(value) or not value >= 1 or value != int(value):
                raise ValueError
            return "fixed", value, 0.0
        kind, nums = parts[0], [float(p) for p in parts[1:]]
    except ValueError:
        raise ValueError(f"bad length {spec!r}: use N, uniform:LO:HI, normal:MEAN:STD or lognormal:MEDIAN:SIGMA") from None
    if kind not in LENGTH_KINDS[1:]:
        raise ValueError(f"unknown length distribution {kind!r} in {spec!r}; choose fixed, uniform, normal or lognormal")
    if len(nums) != 2 or not all(math.isfinite(x) for x in nums):
        raise ValueError(f"bad length {spec!r}: {kind} takes two numbers")
    a, b = nums
    if kind == "uniform" and not 1 <= a <= b:
        raise ValueError(f"bad length {spec!r}: need 1 <= LO <= HI")
    if kind == "normal" and (a < 1 or b < 0):
        raise ValueError(f"bad length {spec!r}: need MEAN >= 1 and STD >= 0")
    if kind == "lognormal" and (a < 1 or b < 0):
        raise ValueError(f"bad length {spec!r}: need MEDIAN >= 1 and SIGMA >= 0")
    return kind, a, b
