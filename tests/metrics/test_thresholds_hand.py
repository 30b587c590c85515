"""Threshold values against numbers worked out by hand from the records' timestamps (docs/metrics.md:
TTFT = c_1 − d, E2E = c_K − d, TPOT = (c_K − c_1)/(N − 1), ITL = c_j − c_{j−1}; percentiles by the linear
method, std the population one), not read back from the summary the gate reads."""

from __future__ import annotations

import math

import pytest

from metrics.gate.evaluate import RunView, evaluate
from metrics.gate.run_samples import RunSamples
from metrics.gate.thresholds import parse_threshold
from metrics.records.frame import frame_from_records
from metrics.records.record import RequestRecord
from metrics.slo import parse_slo
from metrics.summary.build import SummaryConfig, summarize
from tests.metrics._records import rec

CONFIG = SummaryConfig(slo=parse_slo(["ttft=150ms"]))


def _records() -> list[RequestRecord]:
    # Request i (0..9) sent at 100·i ms, first chunk 20 + 20·i ms later, then chunks 5 and 15 ms after
    # the first carrying 1, 1 and 2 tokens (N = 4); two failures without any chunk.
    out = []
    for i in range(10):
        a = 100.0 * i
        first = a + 20 + 20 * i
        out.append(rec(i, a=a, d=a, chunks=[first, first + 5, first + 15], k=[1, 1, 2], closed=first + 20))
    out.append(rec(10, a=1000, d=1000, chunks=[], n=0, closed=1010, status="error", error_kind="http_status"))
    out.append(rec(11, a=1100, d=1100, chunks=[], n=0, closed=1110, status="error", error_kind="timeout_total"))
    return out


@pytest.fixture(scope="module")
def run() -> RunView:
    frame = frame_from_records(_records())
    return RunView(summarize(frame, CONFIG, {}), records=lambda: RunSamples(frame, CONFIG))


def _value(view: RunView, text: str) -> float | None:
    return evaluate([parse_threshold(text)], view)[0].value


# TTFT of request i: 20·(i + 1) ms, i.e. 20, 40, ..., 200 ms. Linear percentile q of 10 sorted samples
# sits at index q·9: p50 between 100 and 120 (index 4.5) = 110 ms, p90 at 8.1 = 180 + 0.1·20 = 182 ms,
# p99 at 8.91 = 180 + 0.91·20 = 198.2 ms, p(75) at 6.75 = 140 + 0.75·20 = 155 ms. Mean 110 ms; the
# population std of 20·(1..10) is 20·√((10² − 1)/12) = 20·√8.25 ms.
TTFT = {
    "min": 0.020, "max": 0.200, "avg": 0.110, "med": 0.110, "p(50)": 0.110, "p(90)": 0.182,
    "p(99)": 0.1982, "p(75)": 0.155, "count": 10, "std": 0.020 * math.sqrt(8.25),
}


@pytest.mark.parametrize(("agg", "expected"), sorted(TTFT.items()))
def test_ttft_aggregates_are_the_hand_computed_ones(run: RunView, agg: str, expected: float) -> None:
    assert _value(run, f"ttft:{agg} < 10") == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_e2e_tpot_and_itl_are_the_hand_computed_ones(run: RunView) -> None:
    # E2E = c_3 − d = 20·(i + 1) + 15 ms: 35 .. 215 ms, mean 125 ms.
    assert _value(run, "e2e:min < 10") == pytest.approx(0.035)
    assert _value(run, "e2e:max < 10") == pytest.approx(0.215)
    assert _value(run, "e2e:avg < 10") == pytest.approx(0.125)
    # TPOT = (c_3 − c_1) / (N − 1) = 15 ms / 3 = 5 ms for every request.
    assert _value(run, "tpot:avg < 10") == pytest.approx(0.005)
    assert _value(run, "tpot:p(99) < 10") == pytest.approx(0.005)
    # ITL per chunk: gaps of 5 and 10 ms per request, 20 samples; max ITL 10 ms.
    assert _value(run, "itl:count < 100") == 20
    assert _value(run, "itl:avg < 10") == pytest.approx(0.0075)
    assert _value(run, "max_itl:max < 10") == pytest.approx(0.010)


def test_goodput_and_errors_are_the_hand_counted_ones(run: RunView) -> None:
    # TTFT ≤ 150 ms: 20 .. 140 ms, 7 of the 10 ok requests; 12 requests measured, 2 of them failed.
    assert _value(run, "goodput:count >= 0") == 7
    assert _value(run, "goodput:attainment >= 0") == pytest.approx(7 / 12)
    assert _value(run, "errors:count < 9") == 2
    assert _value(run, "errors:rate < 1") == pytest.approx(2 / 12)
    assert _value(run, "requests:count > 0") == 12


def test_the_pass_condition_at_a_hand_computed_value(run: RunView) -> None:
    # p90 of TTFT is 182 ms: `<=` 182ms passes, `<` 182ms fails, `<` 183ms passes.
    verdicts = evaluate([parse_threshold(t) for t in ("ttft:p(90) <= 182ms", "ttft:p(90) < 182ms",
                                                       "ttft:p(90) < 183ms", "ttft:p(90) > 181ms")], run)
    assert [v.passed for v in verdicts] == [True, False, True, True]
