"""Golden summary of a six-request run; every expected number is worked out by hand in the comments."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

from metrics.records.record import RequestRecord
from metrics.slo import parse_slo
from metrics.summary.build import REQUEST_IDENTITIES, SummaryConfig, summarize
from tests.metrics._records import rec


def _run() -> list[RequestRecord]:
    common: dict[str, Any] = {"prompt_tokens_estimated": False}
    return [
        rec(0, a=0, d=0, chunks=[100], k=[1], closed=110, prompt_tokens=50, **common),  # warm-up
        rec(
            1, a=1000, d=1002, chunks=[1102, 1112, 1132], k=[1, 1, 1], closed=1140, prompt_tokens=100,
            cached_tokens=0, prompt_tokens_target=96, tags={"scenario": "chat"},
            server_chunk_s=[0.095, 0.105, 0.124], server={"queue_s": 0.01, "prefill_s": 0.08, "decode_s": 0.03},
            **common,
        ),
        rec(2, a=2000, d=2000, chunks=[2200, 2230], k=[1, 3], closed=2240, prompt_tokens=600,
            tags={"scenario": "rag"}, **common),
        rec(3, a=3000, d=3001, chunks=[], n=0, closed=3050, status="error", error_kind="http_status",
            tags={"scenario": "chat"}),
        rec(4, a=4000, d=4000, chunks=[4050], k=[1], closed=4060, prompt_tokens=3000, cached_tokens=3000,
            tags={"scenario": "chat"}, **common),
        rec(5, a=9000, d=9000, chunks=[9100], k=[1], closed=9110, prompt_tokens=50, **common),  # cool-down
    ]


def _config(**overrides: Any) -> SummaryConfig:
    base: dict[str, Any] = {
        "slo": parse_slo(["ttft=150ms", "tpot=15ms", "fluidity=0.5", "fluidity_prefill=150ms",
                          "fluidity_decode=20ms"]),
        "warmup_s": 0.5,
        "cooldown_s": 1.0,
        "schedule_end_s": 10.0,
        "output_bucket_edges": (0, 2, 4),
        "stall_threshold_s": 0.025,
    }
    base.update(overrides)
    return SummaryConfig(**base)


@pytest.fixture  # per test, not per module: mutmut credits a shared fixture to the first test only
def summary() -> dict[str, Any]:
    return summarize(_run(), _config(), {"target": "http://127.0.0.1:1"})


def test_requests_and_window(summary: dict[str, Any]) -> None:
    assert summary["schema_version"] == 2
    req = summary["requests"]
    assert (req["records"], req["sent"], req["succeeded"], req["failed"], req["cancelled"]) == (6, 6, 5, 1, 0)
    assert req["never_sent"] == req["failed_before_send"] == req["cancelled_before_send"] == 0
    assert req["errors"] == {"http_status": 1}
    assert req["in_window"] == 4  # intended 1000..4000 ms: after the 0.5 s warm-up, before 10 − 1 s
    run = summary["run"]
    assert run["target"] == "http://127.0.0.1:1"
    assert run["percentile_method"] == "linear"
    # First measured send 1002 ms → last measured completion 4060 ms.
    assert run["window"] == {"start_s": 1.002, "end_s": 4.06, "duration_s": pytest.approx(3.058),
                             "warmup_s": 0.5, "cooldown_s": 1.0, "measured": 4}


def test_throughput(summary: dict[str, Any]) -> None:
    tp = summary["throughput"]
    assert tp["requests_per_s"] == pytest.approx(3 / 3.058)  # three measured successes
    assert tp["output_tokens_per_s"] == pytest.approx(8 / 3.058)  # N = 3 + 4 + 1
    assert tp["total_tokens_per_s"] == pytest.approx((8 + 3700) / 3.058)  # + P = 100 + 600 + 3000
    assert tp["offered_rps"] == pytest.approx(1.0)  # 3 intervals over 3 s of intended times
    assert tp["achieved_rps"] == pytest.approx(3 / 2.998)  # sends at 1002 … 4000 ms


def test_latency_blocks(summary: dict[str, Any]) -> None:
    lat = summary["latency"]
    assert set(lat) == {"ttft_s", "ttft_from_schedule_s", "itl_s", "itl_token_s", "tpot_s", "e2e_s",
                        "e2e_close_s", "e2e_from_schedule_s", "dispatch_lag_s", "max_itl_s", "fluidity"}
    # Only the successful measured requests 1, 2, 4 are sampled; the failed request 3 is not.
    assert lat["ttft_s"]["count"] == 3
    assert lat["ttft_s"]["mean"] == pytest.approx(0.35 / 3)
    assert (lat["ttft_s"]["min"], lat["ttft_s"]["p50"], lat["ttft_s"]["max"]) == pytest.approx((0.05, 0.1, 0.2))
    assert lat["ttft_from_schedule_s"]["max"] == pytest.approx(0.2)
    assert lat["ttft_from_schedule_s"]["p50"] == pytest.approx(0.102)
    assert lat["itl_s"]["count"] == 3  # 10, 20 ms (request 1) and 30 ms (request 2)
    assert lat["itl_s"]["p50"] == pytest.approx(0.02)
    assert lat["itl_token_s"]["count"] == 5  # 10, 20 and the 30 ms gap split over 3 tokens
    assert lat["itl_token_s"]["mean"] == pytest.approx(0.012)
    assert lat["itl_token_s"]["p50"] == pytest.approx(0.01)
    assert lat["tpot_s"]["count"] == 2  # N = 1 has no TPOT
    assert lat["tpot_s"]["mean"] == pytest.approx(0.0125)  # 15 and 10 ms
    assert [lat["e2e_s"][k] for k in ("min", "p50", "max")] == pytest.approx([0.05, 0.13, 0.23])
    assert [lat["e2e_close_s"][k] for k in ("min", "p50", "max")] == pytest.approx([0.06, 0.138, 0.24])
    assert lat["e2e_from_schedule_s"]["p50"] == pytest.approx(0.132)
    assert lat["dispatch_lag_s"]["max"] == pytest.approx(0.002)
    assert lat["dispatch_lag_s"]["count"] == 3
    assert (lat["max_itl_s"]["count"], lat["max_itl_s"]["max"]) == (2, pytest.approx(0.03))
    # Fluidity (D_p 150 ms, D_d 20 ms): request 2 misses 3 + 1 of 6 deadlines → 1/3; others 1.
    assert lat["fluidity"]["count"] == 3
    assert lat["fluidity"]["mean"] == pytest.approx(7 / 9)
    assert lat["fluidity"]["min"] == pytest.approx(1 / 3)


def test_goodput(summary: dict[str, Any]) -> None:
    gp = summary["goodput"]
    # Request 1 meets TPOT = 15 ms exactly (inclusive); request 4 has N = 1 (TPOT not judged);
    # request 2 misses TTFT; request 3 failed and stays in the denominator.
    assert (gp["good"], gp["measured"], gp["attainment"]) == (2, 4, 0.5)
    assert gp["requests_per_s"] == pytest.approx(2 / 3.058)
    assert gp["slo"]["ttft_s"] == 0.15 and gp["slo"]["fluidity_deadlines_s"] == [0.15, 0.02]


def test_stalls_tokens_saturation(summary: dict[str, Any]) -> None:
    assert summary["stalls"] == {"threshold_s": 0.025, "count": 1, "total_s": pytest.approx(0.03),
                                 "requests_with_stalls": 1}
    tok = summary["tokens"]
    assert (tok["output_tokens"], tok["prompt_tokens"], tok["cached_tokens"]) == (8, 3700, 3000)
    assert (tok["output_estimated"], tok["prompt_estimated"], tok["cached_unknown"]) == (0, 0, 1)
    assert tok["token_source"] == {"server": 3}
    assert tok["itl_token_basis"] == "reported"
    acc = tok["prompt_accuracy"]
    assert (acc["count"], acc["mean_error_tokens"]) == (1, 4.0)
    assert acc["abs_rel_error"]["p50"] == pytest.approx(4 / 96)
    sat = summary["run"]["client_saturation"]
    # Lag of every measured send, the failed one included: 0, 0, 1, 2 ms → p99 at index 2.97.
    assert sat["lag_p99_s"] == pytest.approx(0.00197)
    assert summary["run"]["client_saturated"] is False


def test_server_side(summary: dict[str, Any]) -> None:
    server = summary["server"]
    assert server["requests_with_timing"] == 1
    assert server["ttft_s"]["p50"] == pytest.approx(0.095)
    assert server["itl_s"]["count"] == 2
    assert server["itl_s"]["max"] == pytest.approx(0.019)
    assert server["ttft_client_minus_server_s"]["p50"] == pytest.approx(0.005)
    assert server["queue_s"]["count"] == 1


def _bucket(summary: dict[str, Any], dimension: str, label: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [
        b for b in summary["buckets"] if b["dimension"] == dimension and b["label"] == label
    ]
    assert len(found) == 1
    return found[0]


def test_bucket_dimensions(summary: dict[str, Any]) -> None:
    labels = {(b["dimension"], b["label"]) for b in summary["buckets"]}
    assert labels == {
        ("prompt_tokens", "0-128"), ("prompt_tokens", "512-2k"), ("prompt_tokens", "2k-8k"),
        ("prompt_tokens", "unknown"),
        ("cache", "none"), ("cache", "unknown"), ("cache", "full"),
        ("output_tokens", "0-2"), ("output_tokens", "2-4"), ("output_tokens", "4+"),
        ("tag:scenario", "chat"), ("tag:scenario", "rag"),
    }
    chat = _bucket(summary, "tag:scenario", "chat")
    assert (chat["measured"], chat["ok"], chat["failed"], chat["good"]) == (3, 2, 1, 2)
    assert chat["latency"]["ttft_s"]["mean"] == pytest.approx(0.075)  # requests 1 and 4
    assert chat["goodput"]["attainment"] == pytest.approx(2 / 3)
    unknown = _bucket(summary, "prompt_tokens", "unknown")  # the failed request never reported P
    assert (unknown["measured"], unknown["failed"], unknown["good"]) == (1, 1, 0)
    assert unknown["latency"]["ttft_s"] == {"count": 0, "mean": None, "std": None, "min": None, "p50": None,
                                            "p90": None, "p95": None, "p99": None, "p999": None, "max": None}
    assert unknown["goodput"]["attainment"] == 0.0
    cache_unknown = _bucket(summary, "cache", "unknown")  # request 2 (absent C) and the failed one
    assert (cache_unknown["measured"], cache_unknown["ok"]) == (2, 1)
    assert cache_unknown["latency"]["itl_token_s"]["count"] == 3
    assert _bucket(summary, "output_tokens", "0-2")["measured"] == 2  # N = 0 (failed) and N = 1
    assert _bucket(summary, "prompt_tokens", "2k-8k")["latency"]["e2e_s"]["max"] == pytest.approx(0.05)


def test_absent_cache_counts_as_zero_when_asked() -> None:
    summary = summarize(_run(), _config(absent_cache_is_zero=True), {})
    cache = {b["label"]: b["measured"] for b in summary["buckets"] if b["dimension"] == "cache"}
    assert cache == {"none": 3, "full": 1}


def test_window_without_schedule_end_ends_at_last_intended_time() -> None:
    # End = 9000 ms (last intended); cool-down 5.5 s → only intended times before 3500 ms count.
    summary = summarize(_run(), _config(schedule_end_s=None, cooldown_s=5.5), {})
    assert summary["requests"]["in_window"] == 3
    # Without cool-down nothing after the warm-up is cut, not even the last request.
    assert summarize(_run(), _config(schedule_end_s=None, cooldown_s=0.0), {})["requests"]["in_window"] == 5


def test_saturation_flag() -> None:
    summary = summarize(_run(), _config(lag_threshold_s=0.001), {})
    assert summary["run"]["client_saturated"] is True


def _add_up(req: dict[str, Any]) -> None:
    """Every identity of REQUEST_IDENTITIES, checked on the numbers."""
    names = {k: v for k, v in req.items() if isinstance(v, int)}
    for identity in REQUEST_IDENTITIES:
        left, right = identity.split(" = ")
        assert names[left] == sum(names[term] for term in right.split(" + ")), identity


def test_sent_counts_only_requests_that_were_sent() -> None:
    records = [
        rec(0, a=0, d=1, chunks=[10], k=[1], closed=11),
        rec(1, a=1, d=2, chunks=[], n=0, closed=3, status="error", error_kind="http_status"),
        rec(2, a=2, d=None, chunks=[], n=0, closed=4, status="error", error_kind="connect_error"),
        rec(3, a=3, d=None, chunks=[], n=0, status="cancelled", error_kind="client_cancelled"),
        rec(4, a=4, d=None, chunks=[], n=0, status="cancelled", error_kind="client_cancelled"),
        rec(5, a=5, d=6, chunks=[], n=0, closed=7, status="cancelled", error_kind="client_cancelled"),
    ]
    req = summarize(records, SummaryConfig(), {})["requests"]
    assert (req["records"], req["sent"], req["never_sent"]) == (6, 3, 3)
    assert (req["succeeded"], req["failed"], req["cancelled"]) == (1, 2, 3)
    assert (req["failed_before_send"], req["cancelled_before_send"]) == (1, 2)
    _add_up(req)


def test_everything_failed_gives_nulls_not_zeros() -> None:
    records = [rec(i, a=1000 * i, d=1000 * i, chunks=[], n=0, status="error", error_kind="timeout_total",
                   closed=1000 * i + 500) for i in range(3)]
    summary = summarize(records, SummaryConfig(slo=parse_slo(["ttft=1s"])), {})
    assert all(block["count"] == 0 and block["p99"] is None for block in summary["latency"].values())
    assert summary["goodput"]["attainment"] == 0.0
    assert summary["throughput"]["requests_per_s"] == 0.0
    assert summary["server"]["ttft_s"]["count"] == 0


def test_empty_run() -> None:
    summary = summarize([], SummaryConfig(), {})
    assert summary["requests"]["records"] == summary["requests"]["sent"] == 0
    _add_up(summary["requests"])
    assert summary["goodput"]["attainment"] is None
    assert summary["throughput"]["requests_per_s"] is None
    assert summary["buckets"] == []
    assert summary["run"]["window"]["duration_s"] is None


def _plain(value: Any) -> None:
    if isinstance(value, dict):
        assert all(type(k) is str for k in value)
        for v in value.values():
            _plain(v)
    elif isinstance(value, list):
        for v in value:
            _plain(v)
    else:
        assert value is None or type(value) in (bool, int, float, str), (value, type(value))


def test_json_serialisable_with_plain_types(summary: dict[str, Any]) -> None:
    _plain(summary)
    assert json.loads(json.dumps(summary)) == json.loads(orjson.dumps(summary))


def test_success_without_content_is_counted_but_never_good() -> None:
    records = [
        rec(0, a=0, d=0, chunks=[100, 110], k=[1, 1], closed=120),
        rec(1, a=10, d=10, chunks=[], n=0, closed=60),  # finished "ok" but streamed nothing
    ]
    summary = summarize(records, SummaryConfig(), {})
    assert summary["requests"]["ok_without_content"] == 1
    assert summary["latency"]["ttft_s"]["count"] == 1
    assert summary["latency"]["dispatch_lag_s"]["count"] == 2  # it was sent, so its lag is a sample
    assert (summary["goodput"]["good"], summary["goodput"]["measured"]) == (1, 2)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("warmup_s", -1.0, "warmup_s must be >= 0"),
        ("stall_threshold_s", 0.0, "stall_threshold_s must be > 0"),
        ("cache_full_ratio", 0.0, "cache_full_ratio"),
        ("prompt_bucket_edges", (10, 5), "prompt bucket edges"),
    ],
)
def test_bad_config_is_rejected(field: str, value: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SummaryConfig(**{field: value})


def test_invariants_on_a_random_run() -> None:
    import numpy as np

    rng = np.random.default_rng(5)
    records = []
    for i in range(400):
        k = int(rng.integers(0, 12))
        start = 10.0 * i + float(rng.uniform(0, 3))
        chunks = list(start + 50 + np.cumsum(rng.gamma(2.0, 5.0, k)))
        status = str(rng.choice(["ok", "ok", "ok", "error", "cancelled"]))
        sent = status == "ok" or i % 3 > 0
        records.append(rec(
            i, a=10.0 * i, d=start if sent else None, chunks=chunks, k=[int(x) for x in rng.integers(0, 3, k)],
            status=status, error_kind=None if status == "ok" else "x", closed=(chunks[-1] if chunks else start) + 1,
            prompt_tokens=int(rng.integers(1, 20_000)), cached_tokens=[None, 0, 500][i % 3],
            tags={"tenant": f"t{i % 4}"},
        ))
    config = _config(warmup_s=0.2, cooldown_s=0.3, schedule_end_s=4.0)
    summary = summarize(records, config, {})
    req = summary["requests"]
    assert req["records"] == 400 and 0 < req["never_sent"] < req["records"] - req["succeeded"]
    _add_up(req)
    measured = summary["goodput"]["measured"]
    assert measured == req["in_window"] == req["in_window_ok"] + req["in_window_failed"] + req["in_window_cancelled"]
    assert 0 <= summary["goodput"]["good"] <= req["in_window_ok"]
    for dimension in ("prompt_tokens", "cache", "output_tokens", "tag:tenant"):
        entries = [b for b in summary["buckets"] if b["dimension"] == dimension]
        assert sum(b["measured"] for b in entries) == measured
        assert sum(b["good"] for b in entries) == summary["goodput"]["good"]
        for key in ("ttft_s", "itl_s", "itl_token_s", "fluidity"):
            assert sum(b["latency"][key]["count"] for b in entries) == summary["latency"][key]["count"]
    for block in summary["latency"].values():
        if block["count"]:
            assert block["min"] <= block["p50"] <= block["p90"] <= block["p99"] <= block["p999"] <= block["max"]
    _plain(summary)


def test_requests_lost_with_a_worker_are_counted_apart_from_never_sent() -> None:
    from exporters.console_notes import requests_line
    from metrics.results.summary_requests import Requests

    records = [
        rec(0, a=0, d=1, chunks=[10], k=[1], closed=11),
        rec(1, a=1, d=None, chunks=[], n=0, closed=4, status="error", error_kind="connect_error"),
        rec(2, a=2, d=None, chunks=[], n=0, status="error", error_kind="worker_lost"),
        rec(3, a=3, d=None, chunks=[], n=0, status="error", error_kind="worker_lost"),
    ]
    req = summarize(records, SummaryConfig(), {})["requests"]
    assert (req["records"], req["sent"], req["never_sent"], req["lost_with_worker"]) == (4, 1, 1, 2)
    assert req["failed_before_send"] == 1 and req["failed"] == 3
    _add_up(req)
    assert requests_line(Requests.from_json(req)).startswith(
        "requests: 4 = 1 sent + 1 never sent (failed 1 before sending) + 2 lost with a worker (in flight or never sent)")
