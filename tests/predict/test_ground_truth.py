"""Ground truth, small enough for CI (bench/predict_ground_truth.py is the full protocol): a sim-engine
server whose GPU, efficiency and step overhead the fit is not told, with a prefix cache; calibrate once from
a short sweep of one prompt/output mix, from the engine steps the sweep scrapes off the server (3 s points
rebuilt from chunk times left most prefill steps out, so the prefill cost rested on a few: the prediction
of the long prompts' TTFT missed by 65-80 % in two of three calibrations; tests/predict/test_robust.py),
then predict a run of each other workload at that run's own send
times. The medians must agree: TPOT within 10 %, TTFT within 20 % (a 5 s run holds 15-25 requests, and TTFT
carries the HTTP path the model does not see); for the trace, whose TTFT is one or two steps, the mean TTFT
within 25 %.

- another mix: 1,024-token prompts, three prefill chunks each;
- a trace with prefix reuse: four shared 1,024-token documents before each request's own 256-512 tokens,
  so a request after its document's first prefills one chunk instead of three. A predictor that ignored
  the prefix cache would put TTFT far outside the tolerance, which the test checks too."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from bench.predict_ground_truth import OTHER, SIM, calibrate, latency_check, replay, without_prefix_cache
from bench.predict_workloads import trace_mix, write_prefix_trace
from loadgen.predict.step_model import load_model
from loadgen.run.embedded import embedded_server


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Path]]:
    """A sim server, and its model calibrated from the engine steps of 3 s points at 4 and 10 req/s."""
    out = tmp_path_factory.mktemp("ground-truth")
    with embedded_server(list(SIM.server)) as url:
        model = calibrate(url, out, replace(SIM, scrape_calibration=True), rates="4,10", point="3s")
        assert {r["step_source"] for r in load_model(model).fit["runs"].values()} == {"engine"}
        yield url, model, out


@pytest.mark.slow
def test_prediction_of_another_mix_matches_the_server(calibrated: tuple[str, Path, Path]) -> None:
    url, model, out = calibrated
    medians = latency_check(url, model, out / "mix", OTHER, rate=3.0)
    measured, predicted = medians["tpot"]
    assert predicted == pytest.approx(measured, rel=0.10), medians
    measured, predicted = medians["ttft"]
    assert predicted == pytest.approx(measured, rel=0.20), medians


@pytest.mark.slow
def test_prediction_of_a_trace_with_prefix_reuse_matches_the_server(calibrated: tuple[str, Path, Path]) -> None:
    url, model, out = calibrated
    mix = trace_mix(write_prefix_trace(out / "trace.jsonl", 60))
    medians = latency_check(url, model, out / "trace", mix, rate=5.0)
    measured, predicted = medians["tpot"]
    assert predicted == pytest.approx(measured, rel=0.10), medians
    # TTFT is one step or two here (~100 or ~200 ms): its median falls on either by chance (from -21 % to
    # +11 % over five calibrations alike to the third digit), so the trace compares the mean, within 25 %
    measured, predicted = medians["ttft_mean"]
    assert predicted == pytest.approx(measured, rel=0.25), medians
    # the same model told there is no prefix cache: three chunks per prompt, TTFT several times longer
    blind = replay(without_prefix_cache(model), out / "trace", mix)["ttft"][1]
    assert blind > 2 * measured, (blind, medians)
