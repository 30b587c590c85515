"""Whether the load generator, not the server, limited an open-loop probe: judged against the load.

A dispatch lag matters in proportion to the gaps between arrivals. At 5 req/s (a 200 ms mean gap) a send
15 ms late barely changes the process the server sees; at 500 req/s (2 ms) it reorders it. So a probe is
*client-limited* when, relative to its rate,

- its dispatch lag p99 exceeds `LAG_SHARE_OF_GAP` of the mean gap between arrivals (1 / rate): the
  latest sends moved by a good part of a gap, so the arrival process is not the one planned. Never
  less than `MIN_LAG_LIMIT_S` (a single run's default `--lag-threshold`): at hundreds of requests/s a
  quarter gap is a millisecond, below the scheduling noise of a machine that keeps up (4-7 ms p99 at
  200 req/s on a partly busy host), and a client that really falls behind there also sends below plan; or
- the client sent at a rate below `1 − RATE_SHORTFALL` of the rate it planned (achieved vs offered send
  rate over the measured window): it could not keep up at all.

An absolute limit (`--lag-threshold` given explicitly) replaces the first test by `lag p99 > limit`, as
a single run judges it (summary.json `run.client_saturated`).
"""

from __future__ import annotations

LAG_SHARE_OF_GAP = 0.25
MIN_LAG_LIMIT_S = 0.010
RATE_SHORTFALL = 0.05


def lag_limit_s(rate: float) -> float:
    """The largest dispatch lag p99 that still leaves the arrival process at `rate` as planned."""
    return max(LAG_SHARE_OF_GAP / rate, MIN_LAG_LIMIT_S)


def client_limited(*, rate: float, lag_p99_s: float | None, offered_rps: float | None,
                   achieved_rps: float | None, absolute_lag_s: float | None = None) -> bool:
    """True when the probe measured the client rather than the server (see the module's doc)."""
    limit = absolute_lag_s if absolute_lag_s is not None else lag_limit_s(rate)
    if lag_p99_s is not None and lag_p99_s > limit:
        return True
    return bool(offered_rps and achieved_rps is not None and achieved_rps < (1 - RATE_SHORTFALL) * offered_rps)


def client_hint(rate: float | None, lag_p99_s: float | None) -> str:
    """One line for a search the client limited: what to change."""
    if rate is None:
        what = "the load generator could not offer the rates planned"
    elif lag_p99_s is not None:
        what = (f"the load generator could not offer {rate:g} req/s (dispatch lag p99 {lag_p99_s * 1e3:.0f} ms "
                f"against a mean gap of {1e3 / rate:.0f} ms between arrivals)")
    else:
        what = f"the load generator could not offer {rate:g} req/s (it sent below the rate planned)"
    return f"hint: {what}: run it with --workers N, or on a quieter machine closer to the server"
