"""Every endpoint of the reference server's HTTP layer, against the deterministic fake engine."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from refserver.text.tokenizer import ByteTokenizer
from tests.refserver.fake_engine import DEFAULT_SCRIPT, FakeEngine, make_app, serve_in_thread, sse_payloads

SCRIPT_TEXT = bytes(DEFAULT_SCRIPT).decode()
MESSAGES = [{"role": "user", "content": "Say hello"}]


@pytest.fixture(scope="module")
def fake_app_config() -> dict[str, Any]:
    """The model name the `base_url` server (tests/refserver/conftest.py) answers with."""
    return {"model_name": "tiny-test"}


def post(base_url: str, path: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{base_url}{path}", json=body, timeout=30.0)


def test_health_and_models(base_url: str) -> None:
    assert httpx.get(f"{base_url}/health").status_code == 200
    models = httpx.get(f"{base_url}/v1/models").json()
    assert models["object"] == "list"
    assert [m["id"] for m in models["data"]] == ["tiny-test"]
    assert models["data"][0]["max_model_len"] == 4096


def test_chat_non_stream(base_url: str) -> None:
    body = post(base_url, "/v1/chat/completions", {"model": "tiny-test", "messages": MESSAGES}).json()
    assert body["object"] == "chat.completion"
    choice = body["choices"][0]
    assert choice["message"] == {"role": "assistant", "content": SCRIPT_TEXT}
    assert choice["finish_reason"] == "stop"
    # The prompt the model sees: the byte template around the message, bos included.
    expected_prompt = ByteTokenizer().encode("<|bos|><|user|>Say hello<|assistant|>", add_bos=False)
    usage = body["usage"]
    assert usage["prompt_tokens"] == len(expected_prompt)
    assert usage["completion_tokens"] == len(DEFAULT_SCRIPT) + 1  # + eos
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert usage["prompt_tokens_details"] == {"cached_tokens": 0}
    assert body["goodput"]["n"] == usage["completion_tokens"]
    assert body["timings"]["predicted_n"] == usage["completion_tokens"]


def test_completions_non_stream_with_text_and_token_ids(base_url: str) -> None:
    body = post(base_url, "/v1/completions", {"prompt": "abc", "max_tokens": 5}).json()
    assert body["object"] == "text_completion"
    assert body["choices"][0]["text"] == SCRIPT_TEXT[:5]
    assert body["choices"][0]["finish_reason"] == "length"
    assert body["usage"]["prompt_tokens"] == 4  # bos + 3 bytes
    by_ids = post(base_url, "/v1/completions", {"prompt": [256, 97, 98], "max_tokens": 3}).json()
    assert by_ids["usage"]["prompt_tokens"] == 3
    assert by_ids["choices"][0]["text"] == SCRIPT_TEXT[:3]


def stream(base_url: str, path: str, body: dict[str, Any]) -> list[Any]:
    response = post(base_url, path, {**body, "stream": True})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    return sse_payloads(response.text)


def test_chat_stream_shape(base_url: str) -> None:
    events = stream(
        base_url, "/v1/chat/completions", {"messages": MESSAGES, "stream_options": {"include_usage": True}}
    )
    assert events[-1] == "[DONE]"
    role, *content, finish, usage_chunk, _ = events
    assert role["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert role["object"] == "chat.completion.chunk"
    assert "".join(c["choices"][0]["delta"]["content"] for c in content) == SCRIPT_TEXT
    assert all(c["choices"][0]["finish_reason"] is None for c in content)
    assert finish["choices"][0] == {"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}
    assert usage_chunk["choices"] == []
    assert usage_chunk["usage"]["completion_tokens"] == len(DEFAULT_SCRIPT) + 1
    assert usage_chunk["usage"]["prompt_tokens_details"]["cached_tokens"] == 0
    assert len({e["id"] for e in events[:-1]}) == 1


def test_stream_without_usage_has_no_usage_chunk(base_url: str) -> None:
    events = stream(base_url, "/v1/chat/completions", {"messages": MESSAGES, "max_tokens": 4})
    assert events[-1] == "[DONE]"
    assert all("usage" not in e for e in events[:-1])
    assert events[-2]["choices"][0]["finish_reason"] == "length"


def test_completions_stream_has_no_role_chunk(base_url: str) -> None:
    events = stream(base_url, "/v1/completions", {"prompt": "x", "max_tokens": 3})
    texts = [e["choices"][0]["text"] for e in events[:-2]]
    assert texts == list(SCRIPT_TEXT[:3])
    assert events[-2]["choices"][0]["finish_reason"] == "length"
    assert events[-2]["object"] == "text_completion"


def test_continuous_usage_counts_every_chunk(base_url: str) -> None:
    options = {"include_usage": True, "continuous_usage_stats": True}
    events = stream(base_url, "/v1/chat/completions", {"messages": MESSAGES, "stream_options": options})
    chunks = events[:-1]
    assert all("usage" in c for c in chunks)
    running = [c["usage"]["completion_tokens"] for c in chunks]
    assert running == sorted(running)
    # Δcompletion_tokens of every chunk is exactly the tokens it carries.
    deltas = [b - a for a, b in zip([0, *running], running, strict=False)]
    assert deltas == [c["goodput"]["n"] for c in chunks]
    assert running[-1] == len(DEFAULT_SCRIPT) + 1


def test_timing_extension(base_url: str) -> None:
    events = stream(base_url, "/v1/chat/completions", {"messages": MESSAGES, "stream_options": {"include_usage": True}})
    chunks = events[:-1]
    times = [c["goodput"]["t"] for c in chunks]
    assert all(t >= 0 for t in times)
    assert times == sorted(times)
    finish = chunks[-2]
    assert sum(c["goodput"]["n"] for c in chunks) == chunks[-1]["usage"]["completion_tokens"]
    final = finish["goodput"]
    for key in ("queue_s", "prefill_s", "decode_s"):
        assert final[key] is not None and final[key] >= 0
    assert final["cached_tokens"] == 0
    timings = finish["timings"]
    assert set(timings) == {
        "prompt_n", "cache_n", "prompt_ms", "prompt_per_token_ms", "prompt_per_second",
        "predicted_n", "predicted_ms", "predicted_per_token_ms", "predicted_per_second",
    }  # fmt: skip
    assert timings["predicted_n"] == chunks[-1]["usage"]["completion_tokens"]
    assert timings["cache_n"] == 0
    assert timings["prompt_n"] == chunks[-1]["usage"]["prompt_tokens"]
    # Content chunks carry the plain extension only.
    assert set(chunks[1]["goodput"]) == {"t", "n"}
    assert "timings" not in chunks[1]


def test_cached_tokens_reported_for_shared_prefix(base_url: str) -> None:
    prompt = "p" * 64
    post(base_url, "/v1/completions", {"prompt": prompt, "max_tokens": 2})
    body = post(base_url, "/v1/completions", {"prompt": prompt + "q", "max_tokens": 2}).json()
    assert body["usage"]["prompt_tokens_details"]["cached_tokens"] == 64
    assert body["timings"]["cache_n"] == 64


def test_stop_string_cuts_output_and_aborts() -> None:
    engine = FakeEngine(script=list(b"Hello, world! Bye"))
    with serve_in_thread(make_app(engine)) as url:
        body = post(url, "/v1/chat/completions", {"messages": MESSAGES, "stop": ["wor", "zzz"]}).json()
        assert body["choices"][0]["message"]["content"] == "Hello, "
        assert body["choices"][0]["finish_reason"] == "stop"
        assert len(engine.aborted) == 1
        events = stream(url, "/v1/chat/completions", {"messages": MESSAGES, "stop": "d!"})
        text = "".join(e["choices"][0]["delta"].get("content", "") for e in events[1:-1])
        assert text == "Hello, worl"
        assert events[-2]["choices"][0]["finish_reason"] == "stop"


def test_ignore_eos_and_min_tokens() -> None:
    engine = FakeEngine(script=list(b"ab"))
    with serve_in_thread(make_app(engine)) as url:
        body = post(url, "/v1/completions", {"prompt": "x", "max_tokens": 7, "ignore_eos": True}).json()
        assert body["choices"][0]["text"] == "abababa"
        assert body["choices"][0]["finish_reason"] == "length"
        body = post(url, "/v1/completions", {"prompt": "x", "max_tokens": 9, "min_tokens": 5}).json()
        assert body["choices"][0]["text"].startswith("ababa")
        assert body["usage"]["completion_tokens"] >= 5


def test_utf8_split_across_tokens_is_held_back() -> None:
    text = "é€😀!"
    engine = FakeEngine(script=list(text.encode()))
    with serve_in_thread(make_app(engine)) as url:
        events = stream(url, "/v1/chat/completions", {"messages": MESSAGES})
    content = [e for e in events[1:-1] if e["choices"][0]["delta"].get("content")]
    assert [c["choices"][0]["delta"]["content"] for c in content] == ["é", "€", "😀", "!"]
    assert [c["goodput"]["n"] for c in content] == [2, 3, 4, 1]
    assert events[-2]["goodput"]["n"] == 1  # the eos token, no text of its own


def test_api_key_required_when_set() -> None:
    with serve_in_thread(make_app(api_key="s3cret")) as url:
        body = {"messages": MESSAGES, "max_tokens": 2}
        denied = httpx.post(f"{url}/v1/chat/completions", json=body)
        assert denied.status_code == 401
        assert denied.json()["error"]["code"] == "invalid_api_key"
        wrong = httpx.post(f"{url}/v1/chat/completions", json=body, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        assert httpx.get(f"{url}/v1/models").status_code == 401
        ok = httpx.post(f"{url}/v1/chat/completions", json=body, headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200
        assert httpx.get(f"{url}/health").status_code == 200


def test_sse_events_never_contain_characters_splitlines_breaks_on() -> None:
    from refserver.api.streaming import sse_event

    text = "a\u2028b\x85c\u2029d\x1ce\rf\ng"
    event = sse_event({"text": text})
    assert event.endswith(b"\n\n")
    assert len(event.decode()[: -len("\n\n")].splitlines()) == 1
    assert sse_payloads(event.decode()) == [{"text": text}]


@pytest.mark.parametrize("streaming", [True, False])
def test_client_leaving_aborts_the_engine_request(streaming: bool) -> None:
    import time

    engine = FakeEngine(paused=True)
    with serve_in_thread(make_app(engine)) as url:
        body = {"messages": MESSAGES, "stream": streaming}
        with pytest.raises(httpx.ReadTimeout):
            # The engine never produces a token, so the client gives up and closes the connection.
            httpx.post(f"{url}/v1/chat/completions", json=body, timeout=httpx.Timeout(30.0, read=0.5))
        deadline = time.monotonic() + 30.0
        while engine.live or not engine.abort_calls:
            assert time.monotonic() < deadline, "the request was never aborted"
            time.sleep(0.01)
        assert engine.finished == {}  # it never ran to an end of its own
