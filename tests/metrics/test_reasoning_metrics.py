"""Reasoning and tool-call figures (docs/metrics.md#reasoning-and-tool-calls), against values worked out
by hand from the three records of tests.metrics._reasoning (their derivation is written there)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from metrics.gate.evaluate import RunView, evaluate
from metrics.gate.run_samples import RunSamples
from metrics.gate.thresholds import parse_threshold
from metrics.latency import answer
from metrics.records.frame import frame_from_jsonl, frame_from_records
from metrics.records.frame_arrow import frame_from_table, read_records_table
from metrics.records.record import RequestRecord
from metrics.slo import parse_slo
from metrics.summary.build import SummaryConfig, summarize
from tests.metrics._frames import assert_same_frame
from tests.metrics._reasoning import reasoning_records
from tests.metrics._records import MS, rec


def _summary(records: list[RequestRecord], *slo: str) -> dict[str, Any]:
    return summarize(records, SummaryConfig(slo=parse_slo(list(slo))), {})


def test_per_request_figures_by_hand() -> None:
    frame = frame_from_records(reasoning_records())
    np.testing.assert_allclose(answer.ttfo_s(frame), [0.110, 0.050, 0.310])
    np.testing.assert_allclose(answer.reasoning_time_s(frame), [0.100, np.nan, 0.300])
    np.testing.assert_array_equal(answer.reasoning_tokens(frame), [30, 0, 20])
    np.testing.assert_array_equal(answer.answer_tokens(frame), [10, 10, 30])
    np.testing.assert_array_equal(answer.tool_calls(frame), [0, 0, 1])
    np.testing.assert_allclose(answer.tool_call_s(frame), [np.nan, np.nan, 0.310])
    np.testing.assert_allclose(answer.tool_call_done_s(frame), [np.nan, np.nan, 0.395])
    assert answer.reasoned(frame).tolist() == [True, False, True]
    assert answer.ended_in_tool_call(frame).tolist() == [False, False, True]


def test_ttfo_of_a_request_without_the_stamp() -> None:
    """No answer stamp: c_1 when nothing was reasoning; none when it reasoned and never answered."""
    frame = frame_from_records([
        rec(0, d=0, chunks=[40, 50]),  # an older record, or an API without reasoning: TTFO = TTFT
        rec(1, d=0, chunks=[40, 50], reasoning_ns=40 * MS),  # reasoned to the end (length): no answer
        rec(2, d=None, chunks=[]),
    ])
    np.testing.assert_allclose(answer.ttfo_s(frame), [0.040, np.nan, np.nan])


def test_unknown_reasoning_count_gives_no_answer_token_sample() -> None:
    frame = frame_from_records([rec(0, d=0, chunks=[5], n=7, reasoning_ns=5 * MS)])
    assert np.isnan(answer.reasoning_tokens(frame)[0]) and np.isnan(answer.answer_tokens(frame)[0])


def test_a_counted_reasoning_figure_above_the_output_gives_no_answer_token_sample() -> None:
    """N = 7 from usage, R = 9 counted over the reasoning chunks: the counts disagree, and 7 − 9 = −2
    answer tokens is not a number anyone could have streamed."""
    frame = frame_from_records([
        rec(0, d=0, chunks=[5, 6], n=7, reasoning_ns=5 * MS, answer_ns=6 * MS, reasoning_tokens=9),
        rec(1, d=0, chunks=[5, 6], n=7, reasoning_ns=5 * MS, answer_ns=6 * MS, reasoning_tokens=7),
    ])
    assert np.isnan(answer.answer_tokens(frame)[0])
    assert answer.answer_tokens(frame)[1] == 0


def test_summary_blocks_and_sections() -> None:
    s = _summary(reasoning_records())
    ttfo = s["latency"]["ttfo_s"]
    assert ttfo["count"] == 3 and ttfo["p50"] == pytest.approx(0.110) and ttfo["min"] == pytest.approx(0.050)
    assert ttfo["mean"] == pytest.approx((0.110 + 0.050 + 0.310) / 3) and ttfo["max"] == pytest.approx(0.310)
    assert s["latency"]["ttft_s"]["max"] == pytest.approx(0.050)  # TTFT keeps its meaning: first output
    think = s["latency"]["reasoning_time_s"]
    assert think["count"] == 2 and think["mean"] == pytest.approx(0.200) and think["p50"] == pytest.approx(0.200)
    assert s["latency"]["tool_call_s"]["count"] == 1 and s["latency"]["tool_call_s"]["max"] == pytest.approx(0.310)
    assert s["latency"]["tool_call_done_s"]["max"] == pytest.approx(0.395)
    r = s["reasoning"]
    assert (r["requests"], r["reasoned"], r["reasoning_tokens_known"]) == (3, 2, 3)
    assert (r["reasoning_tokens_total"], r["answer_tokens_total"]) == (50, 50)
    assert r["reasoning_tokens_source"] == {"tokenizer": 1, "usage": 2}
    assert r["reasoning_tokens"]["p50"] == 20 and r["reasoning_tokens"]["mean"] == pytest.approx(50 / 3)
    assert r["answer_tokens"]["p50"] == 10 and r["answer_tokens"]["max"] == 30
    t = s["tool_calls"]
    assert (t["requests"], t["calls"], t["ended_in_tool_call"]) == (1, 1, 1)
    assert t["calls_per_request"]["count"] == 3 and t["calls_per_request"]["mean"] == pytest.approx(1 / 3)


def test_buckets_carry_the_figures() -> None:
    s = _summary(reasoning_records())
    out = {b["label"]: b for b in s["buckets"] if b["dimension"] == "output_tokens"}
    assert set(out) == {"0-64"}
    assert out["0-64"]["latency"]["ttfo_s"]["count"] == 3
    assert out["0-64"]["reasoning"]["reasoning_tokens"]["max"] == 30
    assert out["0-64"]["tool_calls"]["calls_per_request"]["mean"] == pytest.approx(1 / 3)


def test_ttfo_slo_judges_the_first_answer_not_the_first_thought() -> None:
    assert _summary(reasoning_records(), "ttft=120ms")["goodput"]["good"] == 3  # TTFT 10, 50, 10 ms
    s = _summary(reasoning_records(), "ttfo=120ms")  # TTFO 110, 50, 310 ms
    assert s["goodput"]["good"] == 2 and s["goodput"]["attainment"] == pytest.approx(2 / 3)
    assert s["goodput"]["slo"]["ttfo_s"] == pytest.approx(0.120)
    assert _summary(reasoning_records(), "ttfo=110ms")["goodput"]["good"] == 2  # inclusive bound
    assert _summary(reasoning_records(), "ttfo=109ms")["goodput"]["good"] == 1


def test_ttfo_slo_and_a_request_that_never_answered() -> None:
    records = [rec(0, d=0, chunks=[10, 20], reasoning_ns=10 * MS, finish_reason="length")]
    assert _summary(records, "ttft=1s")["goodput"]["good"] == 1
    assert _summary(records, "ttfo=1s")["goodput"]["good"] == 0


def test_ttfo_slo_on_a_run_without_reasoning_judges_ttft() -> None:
    plain = [rec(i, a=100 * i, d=100 * i, chunks=[100 * i + 30 + 10 * i]) for i in range(3)]  # 30, 40, 50 ms
    s = _summary(plain, "ttfo=40ms")
    assert s["goodput"]["good"] == 2 and s["latency"]["ttfo_s"]["max"] == pytest.approx(0.050)
    assert "reasoning" in s  # asked for: shown, with nothing reasoned
    assert s["reasoning"]["reasoned"] == 0 and s["tool_calls"]["calls"] == 0


def _value(records: list[RequestRecord], text: str) -> float | None:
    frame = frame_from_records(records)
    config = SummaryConfig()
    view = RunView(summarize(frame, config, {}), records=lambda: RunSamples(frame, config))
    verdict = evaluate([parse_threshold(text)], view)[0]
    return verdict.value


@pytest.mark.parametrize(("text", "expected"), [
    ("ttfo:p(50) < 1s", 0.110),
    ("ttfo:max < 1s", 0.310),
    ("ttfo:p(75) < 1s", 0.210),  # not in summary.json: from the records, linear between 110 and 310 ms
    ("reasoning_time:avg < 1s", 0.200),
    ("reasoning_tokens:max <= 4000", 30),
    ("reasoning_tokens:med <= 4000", 20),
    ("answer_tokens:avg > 0", 50 / 3),
    ("tool_calls:max < 2", 1),
    ("tool_call_done:max < 1s", 0.395),
    ("ttfo{output_bucket:0-64}:p(50) < 1s", 0.110),
])
def test_thresholds(text: str, expected: float) -> None:
    assert _value(reasoning_records(), text) == pytest.approx(expected)


def test_thresholds_pass_and_fail_as_written() -> None:
    frame = frame_from_records(reasoning_records())
    view = RunView(summarize(frame, SummaryConfig(), {}))
    verdicts = evaluate([parse_threshold("ttfo:p(99) < 300ms"), parse_threshold("reasoning_tokens:max <= 30")], view)
    assert [v.passed for v in verdicts] == [False, True]
    assert verdicts[1].line() == "PASS reasoning_tokens:max <= 30  measured 30, limit 30"


def test_a_run_without_reasoning_still_answers_a_ttfo_threshold_from_itsreasoning_records() -> None:
    plain = [rec(i, a=100 * i, d=100 * i, chunks=[100 * i + 30 + 10 * i]) for i in range(3)]
    assert _value(plain, "ttfo:max < 1s") == pytest.approx(0.050)
    assert _value(plain, "tool_calls:max < 1") == 0
    assert _value(plain, "reasoning_tokens:max < 1 | nodata=pass") is None  # unknown, never zero


def test_token_limits_take_no_unit() -> None:
    with pytest.raises(ValueError, match="unit"):
        parse_threshold("reasoning_tokens:p(99) < 4s")


def test_absent_when_no_request_reasoned_or_called_a_tool() -> None:
    """A plain run reads exactly as before, answer stamps or not (the client stamps every answer)."""
    plain = [rec(i, a=100 * i, d=100 * i, chunks=[100 * i + 30, 100 * i + 40], closed=100 * i + 45,
                 session=i // 2, turn=i % 2 + 1, finish_reason="stop") for i in range(4)]
    stamped = [rec(i, a=100 * i, d=100 * i, chunks=[100 * i + 30, 100 * i + 40], closed=100 * i + 45,
                   session=i // 2, turn=i % 2 + 1, finish_reason="stop", answer_ns=(100 * i + 30) * MS,
                   reasoning_tokens=0, reasoning_tokens_source="usage") for i in range(4)]
    before, after = _summary(plain), _summary(stamped)
    assert after == before
    assert "reasoning" not in after and "tool_calls" not in after and "ttfo_s" not in after["latency"]
    assert "ttfo_s" not in after["goodput"]["slo"]
    assert all("reasoning" not in b for b in after["buckets"])


def test_a_tool_turn_is_its_own_turn_bucket() -> None:
    records = [
        rec(0, a=0, d=0, chunks=[10], session=0, turn=1, finish_reason="tool_calls", tool_calls=1,
            answer_ns=10 * MS, tool_call_ns=10 * MS),
        rec(1, a=100, d=100, chunks=[110], session=0, turn=2, finish_reason="tool_use"),  # Messages' name
        rec(2, a=200, d=200, chunks=[210], session=0, turn=3, finish_reason="stop"),
        rec(3, a=300, d=300, chunks=[310], session=1, turn=1, finish_reason="stop"),
    ]
    turn = {b["label"]: b["measured"] for b in _summary(records)["buckets"] if b["dimension"] == "turn"}
    assert turn == {"1": 1, "3-4": 1, "tool": 2}


def test_every_reader_builds_the_same_columns(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_bytes(b"".join(r.to_json() for r in reasoning_records()))
    built = frame_from_records(reasoning_records())
    assert_same_frame(frame_from_jsonl(path), built)
    assert_same_frame(frame_from_table(read_records_table(path)), built)
    assert built.reasoning_source == ["usage", "usage", "tokenizer"]


def test_a_threshold_reads_the_tool_turn_bucket() -> None:
    from metrics.gate.thresholds import check_labels

    records = [
        rec(0, a=0, d=0, chunks=[40], session=0, turn=1, finish_reason="tool_calls", tool_calls=1,
            answer_ns=40 * MS, tool_call_ns=40 * MS, tool_call_done_ns=45 * MS),  # TTFO 40 ms
        rec(1, a=100, d=100, chunks=[110], session=0, turn=2, finish_reason="stop"),  # TTFO 10 ms
    ]
    threshold = parse_threshold("ttfo{turn:tool}:max < 1s")
    check_labels([threshold], prompt_edges=(0, 128), output_edges=(0, 64))
    frame = frame_from_records(records)
    view = RunView(summarize(frame, SummaryConfig(), {}), records=lambda: RunSamples(frame, SummaryConfig()))
    assert evaluate([threshold], view)[0].value == pytest.approx(0.040)
    assert evaluate([parse_threshold("ttfo{turn:2}:max < 1s")], view)[0].value == pytest.approx(0.010)
