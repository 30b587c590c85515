"""Fault injection: each mode as a client sees it on a real socket, and the seeded draw."""

from __future__ import annotations

import itertools
import json
import time

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from refserver.api.faults import FaultConfig, FaultInjector
from tests.refserver.fake_engine import FakeEngine, make_app, serve_in_thread, sse_payloads

TIMER_SLACK_S = 0.002
BODY = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 6, "stream": True}


def chat(url: str, body: dict[str, object] = BODY) -> httpx.Response:
    return httpx.post(f"{url}/v1/chat/completions", json=body, timeout=60.0)


def content_chunks(events: list[object]) -> list[dict[str, object]]:
    return [e for e in events if isinstance(e, dict) and e.get("choices") and e["choices"][0].get("delta", {}).get("content")]


@pytest.mark.parametrize(("kind", "status"), [("error_500", 500), ("error_429", 429)])
def test_http_error_faults(kind: str, status: int) -> None:
    engine = FakeEngine()
    faults = FaultConfig(error_500=1.0) if kind == "error_500" else FaultConfig(error_429=1.0)
    with serve_in_thread(make_app(engine, faults=faults)) as url:
        response = chat(url)
        assert response.status_code == status
        assert response.json()["error"]["code"] == "injected_fault"
    assert engine.finished == {}  # the engine never saw the request


def test_disconnect_mid_stream_frees_the_request() -> None:
    engine = FakeEngine()
    with serve_in_thread(make_app(engine, faults=FaultConfig(disconnect=1.0, after_chunks=2))) as url:
        lines: list[str] = []
        with pytest.raises(httpx.RemoteProtocolError), httpx.stream("POST", f"{url}/v1/chat/completions", json=BODY) as r:
            assert r.status_code == 200
            lines.extend(line for line in r.iter_lines() if line)
        events = sse_payloads("\n\n".join(lines))
        assert len(content_chunks(events)) == 2
        assert "[DONE]" not in events
        assert all(e["choices"][0]["finish_reason"] is None for e in events if isinstance(e, dict))
        wait_until(lambda: not engine.live)
        assert len(engine.aborted) == 1 and engine.finished == {}
        with pytest.raises(httpx.RemoteProtocolError):
            chat(url, {**BODY, "stream": False})
        # Cut before any content: still aborted, and counted as such in /metrics.
    with serve_in_thread(make_app(FakeEngine(), faults=FaultConfig(disconnect=1.0, after_chunks=0))) as url:
        with pytest.raises(httpx.RemoteProtocolError):
            chat(url)
        metrics = httpx.get(f"{url}/metrics").text
    aborted = [
        s.value
        for family in text_string_to_metric_families(metrics)
        for s in family.samples
        if s.name == "vllm:request_success_total" and s.labels["finished_reason"] == "abort"
    ]
    assert aborted == [1.0]


def test_stall_then_resume() -> None:
    faults = FaultConfig(stall=1.0, stall_s=0.4, after_chunks=1)
    with serve_in_thread(make_app(FakeEngine(), faults=faults)) as url:
        events = sse_payloads(chat(url).text)
    assert events[-1] == "[DONE]"
    chunks = content_chunks(events)
    assert len(chunks) == 6
    times = [c["goodput"]["t"] for c in chunks]  # type: ignore[index]
    assert times[1] - times[0] >= 0.4 - TIMER_SLACK_S


def test_malformed_event_then_the_stream_goes_on() -> None:
    with serve_in_thread(make_app(FakeEngine(), faults=FaultConfig(malformed=1.0, after_chunks=1))) as url:
        events = sse_payloads(chat(url).text)
        non_stream = chat(url, {**BODY, "stream": False})
    broken = [e for e in events if isinstance(e, str) and e != "[DONE]"]
    assert len(broken) == 1
    assert events.index(broken[0]) == 2  # role chunk, one content chunk, then the broken event
    assert events[-1] == "[DONE]"
    assert len(content_chunks(events)) == 6
    with pytest.raises(json.JSONDecodeError):
        json.loads(non_stream.text)


def test_token_and_first_token_delays() -> None:
    faults = FaultConfig(token_delay_s=0.05, first_token_delay_s=0.3)
    with serve_in_thread(make_app(FakeEngine(), faults=faults)) as url:
        chunks = content_chunks(sse_payloads(chat(url).text))
    times = [c["goodput"]["t"] for c in chunks]  # type: ignore[index]
    # uvicorn runs uvloop when installed, whose timers tick in whole milliseconds off a cached clock:
    # a sleep may end up to ~1 ms early.
    assert times[0] >= 0.35 - TIMER_SLACK_S
    assert all(b - a >= 0.05 - TIMER_SLACK_S for a, b in itertools.pairwise(times))


def test_draws_are_seeded_and_follow_the_fractions() -> None:
    config = FaultConfig(error_500=0.1, disconnect=0.2, stall=0.05, seed=7)
    first = [FaultInjector(config).draw() for _ in range(1)]
    draws = [d for injector in [FaultInjector(config)] for d in (injector.draw() for _ in range(4000))]
    again = [d for injector in [FaultInjector(config)] for d in (injector.draw() for _ in range(4000))]
    assert draws == again and draws[0] == first[0]
    other = FaultInjector(FaultConfig(error_500=0.1, disconnect=0.2, stall=0.05, seed=8))
    assert [other.draw() for _ in range(4000)] != draws
    share = {kind: draws.count(kind) / len(draws) for kind in ("error_500", "disconnect", "stall", "none")}
    assert share["error_500"] == pytest.approx(0.1, abs=0.03)
    assert share["disconnect"] == pytest.approx(0.2, abs=0.03)
    assert share["stall"] == pytest.approx(0.05, abs=0.02)
    assert share["none"] == pytest.approx(0.65, abs=0.03)


@pytest.mark.parametrize(
    "config",
    [FaultConfig(error_500=1.5), FaultConfig(error_500=0.6, error_429=0.6), FaultConfig(stall_s=-1), FaultConfig(after_chunks=-1)],
)
def test_invalid_fault_config(config: FaultConfig) -> None:
    with pytest.raises(ValueError):
        config.validate()


def wait_until(condition: object, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.01)


def test_non_streaming_response_is_held_back_by_stall_and_delays() -> None:
    faults = FaultConfig(stall=1.0, stall_s=0.3, token_delay_s=0.02, first_token_delay_s=0.1)
    with serve_in_thread(make_app(FakeEngine(), faults=faults)) as url:
        response = chat(url, {**BODY, "stream": False})
    assert response.status_code == 200
    body = response.json()
    assert body["usage"]["completion_tokens"] == 6
    # 0.3 stall + 0.1 first-token delay + 6 × 0.02 per token, all before the response is built.
    assert body["goodput"]["t"] >= 0.3 + 0.1 + 6 * 0.02 - TIMER_SLACK_S
