"""Ground truth, small enough for CI (bench/predict_ground_truth.py is the full protocol): a sim-engine
server whose GPU, efficiency and step overhead the fit is not told; calibrate from a short sweep of one
prompt/output mix, then predict a run of another mix (1,024-token prompts, three prefill chunks each)
at that run's own send times. The medians must agree: TPOT within 10 %, TTFT within 20 % (a 5 s run
holds ~15 requests, and TTFT carries the HTTP path the model does not see)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.predict_ground_truth import latency_check


@pytest.mark.slow
def test_prediction_of_another_mix_matches_the_server(tmp_path: Path) -> None:
    medians = latency_check(tmp_path)
    measured, predicted = medians["tpot"]
    assert predicted == pytest.approx(measured, rel=0.10), medians
    measured, predicted = medians["ttft"]
    assert predicted == pytest.approx(measured, rel=0.20), medians
