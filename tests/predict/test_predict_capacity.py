"""The predicted capacity's search and its band: the band's searches start where the estimate's did and
follow its rules, so parameters without uncertainty give the estimate itself; the band holds the estimate;
a search never returns a rate it did not see pass; and attainment that is not monotone over the rates
predicted is said, in one line, on the console, in predict.json and on the page.

The server model's every step lasts 0.1 s; 10 requests of 4 output tokens at constant arrivals under
TTFT <= 150 ms: attainment is 100 % up to about 2.5 req/s, then goes up and down (50 % at 4 req/s, 80 % at
5, 90 % at 10.6), as requests of a small schedule fall in or out of step with the engine's steps.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loadgen.cli.commands import run_cli
from loadgen.cli.run import run_defaults
from loadgen.predict.predict import RequestsAt, capacity, capacity_band, monotone_note
from loadgen.predict.requests import RequestSource
from loadgen.predict.step_model import SchedulerLimits, StepModel
from loadgen.spec.build import build_spec
from metrics.slo import SLO

LIMITS = SchedulerLimits(num_blocks=512)  # room for every request; a small pool is quick to set up
PREDICT = ["--requests", "10", "--arrival", "constant", "--output-tokens", "4", "--slo", "ttft=150ms"]


def _source() -> tuple[RequestSource, SLO, float]:
    values = run_defaults()
    values.update(requests=10, arrival="constant", output_tokens="4", slo=["ttft=150ms"])
    spec, _ = build_spec(values)
    return RequestSource(spec), spec.metrics.slo, spec.load.arrival.rate or 1.0


def _requests_at(source: RequestSource) -> RequestsAt:
    return source.at


def test_a_model_without_standard_errors_has_its_estimate_as_band(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "m.json"
    StepModel(fixed_s=0.1, limits=LIMITS).save(model)
    out = tmp_path / "p.json"
    assert run_cli(["predict", "--server-model", str(model), *PREDICT, "--capacity", "--no-html",
                    "--json", str(out)]) == 0
    cap = json.loads(out.read_text())["capacity"]
    assert cap["rate"] > 0 and cap["low"] == cap["rate"] == cap["high"]
    assert "no band: the server model holds no standard errors" in capsys.readouterr().out


def test_the_band_searches_from_the_estimates_start() -> None:
    """Standard errors too small to change any step's duration: all three searches see the same attainment
    at every rate, so from the same start they end at the same rate (from the estimate, as the band's
    searches once started, the faster one doubled past it to 10.6 req/s)."""
    source, slo, start = _source()
    model = StepModel(fixed_s=0.1, limits=LIMITS, std_err={"fixed_s": 1e-15})
    band = capacity_band(model, _requests_at(source), slo, 0.9, start=start)
    assert band.low == band.rate == band.high > 0


def test_the_band_holds_the_estimate() -> None:
    source, slo, start = _source()
    model = StepModel(fixed_s=0.1, limits=LIMITS, std_err={"fixed_s": 0.03})
    band = capacity_band(model, _requests_at(source), slo, 0.9, start=start)
    assert band.low <= band.rate <= band.high
    assert band.low < band.high


@pytest.mark.parametrize(("start", "max_probes"), [(64.0, 4), (64.0, 40), (4.0, 3), (0.5, 5), (1.0, 40)])
def test_the_search_returns_only_a_rate_it_saw_pass(start: float, max_probes: int) -> None:
    """Out of probes while halving from a failing start, the search once returned the last rate it halved
    to, which had failed (4 req/s from 64 in 4 probes)."""
    source, slo, _ = _source()
    search = capacity(StepModel(fixed_s=0.1, limits=LIMITS), _requests_at(source), slo, 0.9, start=start, max_probes=max_probes)
    assert len(search.probes) <= max_probes
    passed = {rate for rate, att in search.probes if att >= 0.9}
    assert search.rate == 0.0 or search.rate in passed
    if search.rate > 0:  # the highest rate it saw pass below every rate it saw fail
        assert search.rate == max(passed) and all(r > search.rate for r, a in search.probes if a < 0.9)


def test_the_note_names_a_passing_rate_above_a_failing_one() -> None:
    note = monotone_note([(2.0, 1.0), (4.0, 0.5), (3.0, 0.6), (10.6, 0.9), (2.5, 1.0)], 0.9)
    assert note == ("predicted attainment is not monotone in the rate: 10.6 req/s (search) meets 90% (90.0%) where "
                    "3 req/s (search), lower, does not (60.0%); the capacity is the highest rate the search's probes "
                    "showed to meet it below the lowest they showed not to, so a rate above it may meet it too")
    # A --rates point that fails below the search's passing probe is named as one.
    note = monotone_note([(10.6, 0.95), (21.2, 0.5), (15.9, 0.5)], 0.9, [(4.0, 0.5, "--rates")])
    assert note is not None and "10.6 req/s (search) meets 90% (95.0%) where 4 req/s (--rates), lower" in note


def test_the_note_names_an_attainment_that_rises_with_the_rate() -> None:
    note = monotone_note([(2.0, 1.0), (3.0, 0.5), (4.0, 0.6), (8.0, 0.2)], 0.9)
    assert note == ("predicted attainment is not monotone in the rate: 60.0% at 4 req/s (search), above 50.0% at "
                    "3 req/s (search)")
    note = monotone_note([(2.0, 1.0), (3.0, 0.5)], 0.9, [(4.0, 0.6, "--rates"), (3.0, 0.5, "--measured")])
    assert note == ("predicted attainment is not monotone in the rate: 60.0% at 4 req/s (--rates), above 50.0% at "
                    "3 req/s (search, --measured)")


def test_no_note_where_attainment_falls_with_the_rate() -> None:
    assert monotone_note([(1.0, 1.0), (2.0, 1.0), (3.0, 0.95), (4.0, 0.5), (8.0, 0.5)], 0.9) is None
    assert monotone_note([], 0.9) is None


def test_a_non_monotone_attainment_is_said_on_the_console_and_in_predict_json(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "m.json"
    StepModel(fixed_s=0.1, limits=LIMITS).save(model)
    out = tmp_path / "p.json"
    assert run_cli(["predict", "--server-model", str(model), *PREDICT, "--capacity", "--rates", "10.6",
                    "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    cap, (at) = doc["capacity"], doc["points"][0]
    assert at["rate"] == 10.6 and at["attainment"] >= 0.9 > 0.5  # the data the note is about
    probes = {p["rate"]: p["attainment"] for p in cap["probes"]}
    failing = min(r for r, a in probes.items() if a < 0.9)
    assert cap["rate"] < failing < 10.6
    assert cap["note"].startswith(f"predicted attainment is not monotone in the rate: 10.6 req/s (--rates) meets "
                                  f"90% (90.0%) where {failing:.3g} req/s (search), lower, does not")
    assert f"note: {cap['note']}" in capsys.readouterr().out.splitlines()
    assert "Attainment not monotone." in out.with_suffix(".html").read_text()  # the page's flag


def test_the_note_says_which_point_came_from_rates_when_the_search_starts_above_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The search starts at 10.6 req/s (90 %, it passes) and finds the capacity at or above it; --rates 4
    (50 %) fails below it: the note names 4 as a --rates point and says the capacity is the search's."""
    model = tmp_path / "m.json"
    StepModel(fixed_s=0.1, limits=LIMITS).save(model)
    out = tmp_path / "p.json"
    assert run_cli(["predict", "--server-model", str(model), *PREDICT, "--capacity", "--rate", "10.6",
                    "--rates", "4", "--json", str(out)]) == 0
    cap = json.loads(out.read_text())["capacity"]
    assert cap["rate"] >= 10.6
    assert "where 4 req/s (--rates), lower, does not (50.0%)" in cap["note"]
    assert "(search) meets 90%" in cap["note"] and "the search's probes" in cap["note"]
