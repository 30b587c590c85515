"""The capacity search: the highest open-loop request rate whose SLO attainment is *shown* to meet a target.

The search sees only probes: one run at a rate, with its measured requests `n` and how many were good
(met every SLO). It never sees a server or a clock, so tests drive it with made-up attainment curves.

**Verdict of a rate.** Runs at the same rate are pooled (good and n add up). The rate *passes* when the
whole confidence interval of its attainment (`metrics.capacity_search.proportion`) lies at or above the
target, *fails* when it lies below, and is *undecided* when it straddles the target. An undecided rate
is probed again at once (`max_repeats` more runs at most) rather than guessed; one still undecided after
that is *unresolved*. (No repeat is made when it would not matter: when the rate, counted as not
passing, already closes the bracket to within the tolerance.) A run in which the load generator fell behind its schedule (client saturated) is
*not evidence* about the server: it is left out of the pool and run once more; a rate at which every
run saw the client fall behind is a limit, and no rate at or above it is probed (the client cannot
offer that much).

**Bracket.** The capacity is the highest passing rate below the lowest rate not shown to pass (failed or
unresolved); that lowest rate is the bracket's upper end. A pass above a failing rate (noise, or a
server that is not monotone) is never claimed; it is reported as a note.

**Next probe**, as a pure function of the settings and the probes so far (`next_step`):
1. the last rate again, if it is undecided and may be repeated, or if the client fell behind in its
   only run;
2. the start rate, before anything is known;
3. between the highest pass and the lowest rate above it that is not shown to pass, or the upper
   limit (`max_rate`, or the lowest rate where the client saturated) when nothing above has been
   shown to fail; doubling the pass when there is no limit;
4. with no pass yet: between the lower limit (`min_rate`) and the lowest rate not shown to pass, the
   lower limit itself once that interval is narrow, halving when there is no lower limit. Halving stops
   at the floor (`floor_rate`: below it a point cannot measure enough requests for a verdict), and never
   goes back to or below a rate whose point measured nothing (*too short*, not an error: the search
   doubles from it when nothing else is known).
A throughput ceiling measured before the search (`from_ceiling`) only sets where it starts: it is not an
upper limit, so the search never stops with points left and no rate above the capacity shown to fail
(unless `max_rate` or the client bounds it).
"Between" is the geometric mean when the ends are more than a factor 2 apart, else the arithmetic mean,
rounded to three significant digits (more when that is needed to stay strictly inside).

**Stopping**: when the bracket is narrower than `tolerance` (relative to its lower end: `bracketed`);
when the highest pass is within `tolerance` of the upper limit (`at_least`, or `client_limited` when the
limit is where the client saturated); when the lower limit failed (`below_min`); when nothing passed down to the floor, or above a point that
measured nothing (`too_short`); when `max_points` runs
have been made (`max_points`; a probe the caller already counted, such as a ceiling run, counts too);
when no run so far is evidence and nothing bounds the search (`no_data`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from metrics.capacity_search.evidence import (
    Observation,
    RateEvidence,
    SearchSettings,
    Verdict,
    judge_rate,
    pool,
    requests_for_a_verdict,
    requests_per_point,
)

CEILING_START = 0.75  # the first probe after a ceiling run, relative to the ceiling

__all__ = ["Observation", "Probe", "RateEvidence", "SearchResult", "SearchSettings", "Status", "Stop", "Verdict",
           "between", "conclude", "from_ceiling", "judge_rate", "next_step", "pool", "requests_for_a_verdict",
           "requests_per_point", "round_rate", "start_rate"]

# Why a search stopped. `interrupted` and `error` are never chosen by `next_step`: the caller concludes
# with them when it could not go on.
Status = Literal["bracketed", "at_least", "client_limited", "below_min", "too_short", "max_points", "no_data",
                 "interrupted", "error"]


@dataclass(frozen=True, slots=True)
class Probe:
    rate: float
    reason: str


@dataclass(frozen=True, slots=True)
class Stop:
    status: Status
    reason: str


@dataclass(frozen=True, slots=True)
class SearchResult:
    capacity: float | None  # the highest rate shown to pass (below every failing rate); None: none did
    upper: float | None  # the lowest rate not shown to pass (fail or unresolved); None: none probed
    status: Status
    reason: str
    evidence: tuple[RateEvidence, ...]  # every probed rate, ascending
    notes: tuple[str, ...] = field(default=())

    def at(self, rate: float | None) -> RateEvidence | None:
        return next((e for e in self.evidence if e.rate == rate), None)


@dataclass(frozen=True, slots=True)
class _Bracket:
    capacity: float | None
    upper: float | None
    ignored_passes: tuple[float, ...]


def _bracket(evidence: Sequence[RateEvidence]) -> _Bracket:
    not_passing = [e.rate for e in evidence if e.verdict in ("fail", "unresolved")]
    upper = min(not_passing) if not_passing else None
    passes = [e.rate for e in evidence if e.verdict == "pass"]
    below = [r for r in passes if upper is None or r < upper]
    return _Bracket(max(below) if below else None, upper, tuple(r for r in passes if r not in below))


def _within_tolerance(b: _Bracket, tolerance: float) -> bool:
    return b.capacity is not None and b.upper is not None and b.upper <= b.capacity * (1 + tolerance)


def _saturation_limit(evidence: Sequence[RateEvidence]) -> float | None:
    """The lowest rate at which every run saw the client fall behind: nothing at or above it is probed."""
    rates = [e.rate for e in evidence if e.verdict == "not_evidence"]
    return min(rates) if rates else None


def round_rate(rate: float, digits: int = 3) -> float:
    """`rate` to `digits` significant digits (probe rates people read: 6.28, not 6.2831853)."""
    return float(f"{rate:.{digits}g}")


def between(lo: float, hi: float) -> float | None:
    """A probe strictly inside (lo, hi): geometric mean when hi > 2·lo, else the arithmetic mean, rounded
    to as few significant digits (from 3) as keep it inside; None when no such rate is worth probing."""
    if not lo < hi:
        return None
    mid = math.sqrt(lo * hi) if hi > 2 * lo else (lo + hi) / 2
    for digits in range(3, 8):
        candidate = round_rate(mid, digits)
        if lo < candidate < hi:
            return candidate
    return None


def start_rate(settings: SearchSettings) -> float:
    s = settings
    if s.start_rate is not None:
        rate = s.start_rate
        if s.min_rate is not None:
            rate = max(rate, s.min_rate)
        if s.max_rate is not None:
            rate = min(rate, s.max_rate)
    elif s.min_rate is not None and s.max_rate is not None:
        rate = math.sqrt(s.min_rate * s.max_rate)
    elif s.max_rate is not None:
        rate = s.max_rate / 2
    else:
        assert s.min_rate is not None  # SearchSettings refuses a search with no start
        rate = s.min_rate
    if s.floor_rate is not None and rate < s.floor_rate:
        return s.floor_rate
    return round_rate(rate, 4)


def from_ceiling(settings: SearchSettings, ceiling_rps: float) -> SearchSettings:
    """The search after a closed-loop point measured the throughput ceiling T: it starts at
    `CEILING_START`·T (never below the floor or --min-rate). T is a hint, not a limit: a closed loop at a
    concurrency the server cannot batch understates it, so when rates pass the search keeps doubling."""
    return replace(settings, start_rate=max(round_rate(ceiling_rps * CEILING_START), settings.floor_rate or 0.0))


def next_step(settings: SearchSettings, observations: Sequence[Observation], points_used: int) -> Probe | Stop:
    """The next rate to probe, or why the search stops. `points_used` counts every run made so far,
    including any the caller made outside the search (a ceiling run)."""
    s = settings
    if points_used >= s.max_points:
        return Stop("max_points", f"--max-points {s.max_points} runs made")
    if not observations:
        return Probe(start_rate(s), "start")
    last = observations[-1]
    evidence = pool(s, observations)
    last_entry = next(e for e in evidence if e.rate == last.rate)
    if last_entry.verdict == "undecided":
        settled = [_as_unresolved(e) if e is last_entry else e for e in evidence]
        if not _within_tolerance(_bracket(settled), s.tolerance):
            return Probe(last.rate, f"attainment interval at {last.rate:g} req/s straddles the target: run again")
        evidence = settled  # resolving it could not move the answer by more than the tolerance
    if last_entry.verdict == "not_evidence" and last_entry.runs <= min(1, s.max_repeats):
        return Probe(last.rate, f"the client fell behind its schedule at {last.rate:g} req/s: run again once")
    b = _bracket(evidence)
    probed = {e.rate for e in evidence}
    saturated = _saturation_limit(evidence)
    limit, limit_kind = s.max_rate, "max_rate"
    if saturated is not None and (limit is None or saturated <= limit):
        limit, limit_kind = saturated, "saturated"
    hi, hi_kind = b.upper, "not_passing"
    if limit is not None and (hi is None or limit < hi):
        hi, hi_kind = limit, limit_kind
    if b.capacity is not None:
        return _from_pass(s, b.capacity, hi, hi_kind)
    return _without_pass(s, hi, hi_kind, probed, _lower_limit(s, evidence))


def _stop_at_top(hi_kind: str, capacity: float, hi: float) -> Stop:
    if hi_kind == "not_passing":
        return Stop("bracketed", f"capacity bracketed in [{capacity:g}, {hi:g}] req/s")
    if hi_kind == "saturated":
        return Stop("client_limited", f"the load generator fell behind at {hi:g} req/s: it cannot show a "
                                      "higher rate (run it with --workers N, or on a quieter machine)")
    return Stop("at_least", f"every rate up to {capacity:g} req/s passed and --max-rate is {hi:g}: the "
                            "capacity is at least that (raise --max-rate to look further)")


def _from_pass(s: SearchSettings, capacity: float, hi: float | None, hi_kind: str) -> Probe | Stop:
    if hi is None:
        return Probe(round_rate(capacity * 2, 4), f"{capacity:g} req/s passed and nothing above is known: double")
    if hi <= capacity * (1 + s.tolerance):
        return _stop_at_top(hi_kind, capacity, hi)
    probe = between(capacity, hi)
    if probe is None:
        return _stop_at_top(hi_kind, capacity, hi)
    return Probe(probe, f"between {capacity:g} (pass) and {hi:g} req/s")


@dataclass(frozen=True, slots=True)
class _Lower:
    rate: float
    kind: Literal["min_rate", "floor", "too_short"]  # the lowest rate that may still be probed, or just above

    @property
    def inclusive(self) -> bool:
        return self.kind != "too_short"


def _lower_limit(s: SearchSettings, evidence: Sequence[RateEvidence]) -> _Lower | None:
    """What bounds the search from below: --min-rate, the floor of the point's length, or the highest rate
    whose point measured nothing (a lower rate would measure less still)."""
    limits = []
    if s.min_rate is not None:
        limits.append(_Lower(s.min_rate, "min_rate"))
    if s.floor_rate is not None:
        limits.append(_Lower(s.floor_rate, "floor"))
    short = [e.rate for e in evidence if e.verdict == "too_short"]
    if short:
        limits.append(_Lower(max(short), "too_short"))
    return max(limits, key=lambda lim: (lim.rate, not lim.inclusive)) if limits else None


def _stop_at_bottom(lower: _Lower, hi: float, hi_kind: str) -> Stop:
    if hi_kind == "saturated":
        return Stop("client_limited", f"the load generator fell behind at {hi:g} req/s, at or below "
                                      f"{lower.rate:g} req/s, the lowest rate the search may probe")
    if lower.kind == "min_rate":
        return Stop("below_min", f"no rate from --min-rate {lower.rate:g} req/s up was shown to pass")
    if lower.kind == "floor":
        return Stop("too_short", f"no rate from {lower.rate:g} req/s up was shown to pass, and a point of this "
                                 "length measures too few requests below it for a verdict: lengthen "
                                 "--point-duration")
    return Stop("too_short", f"a point at {lower.rate:g} req/s measured no request and nothing above it "
                             "passed: lengthen --point-duration")


def _without_pass(s: SearchSettings, hi: float | None, hi_kind: str, probed: set[float],
                  lower: _Lower | None) -> Probe | Stop:
    if hi is None:
        if lower is not None and lower.kind == "too_short":
            return Probe(round_rate(lower.rate * 2, 4), f"a point at {lower.rate:g} req/s measured no "
                                                        "request: double")
        return Stop("no_data", "no run so far is evidence about the server")
    if lower is None:
        return Probe(round_rate(hi / 2, 4), f"nothing passed up to {hi:g} req/s: halve")
    lo = lower.rate
    if hi <= lo * (1 + s.tolerance):
        if lower.inclusive and lo < hi and lo not in probed:
            return Probe(lo, f"check the lowest rate, {lo:g} req/s, itself")
        return _stop_at_bottom(lower, hi, hi_kind)
    if lower.kind != "min_rate":  # a technical limit, not a guess at the capacity: halve down to it
        half = round_rate(hi / 2, 4)
        if half > lo:
            return Probe(half, f"nothing passed up to {hi:g} req/s: halve")
    probe = between(lo, hi)
    if probe is None:
        if lower.inclusive and lo not in probed:
            return Probe(lo, f"check the lowest rate, {lo:g} req/s, itself")
        return _stop_at_bottom(lower, hi, hi_kind)
    return Probe(probe, f"between {lo:g} and {hi:g} req/s")


def conclude(settings: SearchSettings, observations: Sequence[Observation], stop: Stop) -> SearchResult:
    """The result of a finished (or stopped) search: capacity, bracket, every rate's evidence, notes."""
    evidence = [e if e.verdict != "undecided" else _as_unresolved(e) for e in pool(settings, observations)]
    b = _bracket(evidence)
    notes = []
    if b.ignored_passes:
        notes.append("passed but above a rate that did not pass, so not claimed (noise, or a server whose "
                     f"attainment is not monotone in load): {', '.join(f'{r:g}' for r in b.ignored_passes)} req/s")
    for e in evidence:
        if e.saturated_runs:
            notes.append(f"{e.rate:g} req/s: the client fell behind its schedule in {e.saturated_runs} of "
                         f"{e.runs} run(s); not evidence about the server")
        if e.verdict == "unresolved":
            notes.append(f"{e.rate:g} req/s: attainment interval still straddles the target after {e.runs} "
                         "run(s); counted as not shown to pass")
    return SearchResult(capacity=b.capacity, upper=b.upper, status=stop.status, reason=stop.reason,
                        evidence=tuple(evidence), notes=tuple(notes))


def _as_unresolved(e: RateEvidence) -> RateEvidence:
    """A search that stops with a rate still undecided leaves it unresolved."""
    return RateEvidence(e.rate, e.good, e.measured, e.runs, e.saturated_runs, "unresolved", e.interval)
