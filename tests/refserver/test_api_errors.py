"""Every refusal of the HTTP layer: 400s with an OpenAI-style body, 429 on a full queue, mid-stream errors."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.refserver.fake_engine import FakeEngine, make_app, serve_in_thread, sse_payloads

MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def fake_app_config() -> dict[str, Any]:
    """Limits small enough to hit: `shared_base_url` (tests/refserver/conftest.py) serves an app with them."""
    return {"max_model_len": 128, "max_body_bytes": 4096, "max_tokens_limit": 64}


def assert_error(response: httpx.Response, status: int, param: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["message"]
    if param is not None:
        assert error["param"] == param
    return dict(error)


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({}, "messages"),
        ({"messages": []}, "messages"),
        ({"messages": "hi"}, "messages"),
        ({"messages": [{"role": "wizard", "content": "x"}]}, "messages[0].role"),
        ({"messages": [{"role": "user", "content": 5}]}, "messages[0].content"),
        ({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}, "messages[0].content"),
        ({"messages": MESSAGES, "max_tokens": -1}, "max_tokens"),
        ({"messages": MESSAGES, "max_tokens": 0}, "max_tokens"),
        ({"messages": MESSAGES, "max_tokens": "10"}, "max_tokens"),
        ({"messages": MESSAGES, "max_tokens": True}, "max_tokens"),
        ({"messages": MESSAGES, "max_completion_tokens": 1.5}, "max_completion_tokens"),
        ({"messages": MESSAGES, "temperature": -0.1}, "temperature"),
        ({"messages": MESSAGES, "temperature": 2.5}, "temperature"),
        ({"messages": MESSAGES, "top_p": 0}, "top_p"),
        ({"messages": MESSAGES, "top_p": 1.01}, "top_p"),
        ({"messages": MESSAGES, "top_k": -2}, "top_k"),
        ({"messages": MESSAGES, "seed": "x"}, "seed"),
        ({"messages": MESSAGES, "stop": 3}, "stop"),
        ({"messages": MESSAGES, "stop": [""]}, "stop"),
        ({"messages": MESSAGES, "ignore_eos": "yes"}, "ignore_eos"),
        ({"messages": MESSAGES, "min_tokens": -1}, "min_tokens"),
        ({"messages": MESSAGES, "min_tokens": 9, "max_tokens": 4}, "min_tokens"),
        ({"messages": MESSAGES, "stream": "true"}, "stream"),
        ({"messages": MESSAGES, "stream_options": {"include_usage": True}}, "stream_options"),
        ({"messages": MESSAGES, "stream": True, "stream_options": []}, "stream_options"),
        ({"messages": MESSAGES, "n": 2}, "n"),
        ({"messages": MESSAGES, "logprobs": True}, "logprobs"),
        ({"messages": MESSAGES, "model": 7}, "model"),
        ({"messages": MESSAGES, "max_tokens": 65}, "max_tokens"),  # over the server's limit
        ({"messages": MESSAGES, "max_tokens": 120}, "max_tokens"),  # prompt + output over the context
        ({"messages": [{"role": "user", "content": "x" * 200}]}, "messages"),  # prompt over the context
    ],
)
def test_chat_400(shared_base_url: str, body: dict[str, Any], param: str) -> None:
    assert_error(httpx.post(f"{shared_base_url}/v1/chat/completions", json=body), 400, param)


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({}, "prompt"),
        ({"prompt": ""}, "prompt"),
        ({"prompt": ["a", "b"]}, "prompt"),
        ({"prompt": [1, -2]}, "prompt"),
        ({"prompt": [99999]}, "prompt"),  # outside the vocabulary
        ({"prompt": {"text": "a"}}, "prompt"),
        ({"prompt": "a", "echo": True}, "echo"),
    ],
)
def test_completions_400(shared_base_url: str, body: dict[str, Any], param: str) -> None:
    assert_error(httpx.post(f"{shared_base_url}/v1/completions", json=body), 400, param)


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/completions"])
def test_a_model_it_does_not_serve_is_vllms_404(shared_base_url: str, path: str) -> None:
    """vLLM refuses a model name it does not serve with 404 and this body; a request without a model, or
    with the served name, is answered by the served model (as vLLM answers it)."""
    prompt: dict[str, Any] = {"messages": MESSAGES} if "chat" in path else {"prompt": "hi"}
    response = httpx.post(f"{shared_base_url}{path}", json={**prompt, "model": "nope", "max_tokens": 2})
    assert response.status_code == 404
    assert response.json() == {"error": {"message": "The model `nope` does not exist.", "type": "NotFoundError",
                                          "param": "model", "code": 404}}
    tokenize = httpx.post(f"{shared_base_url}/tokenize", json={**prompt, "model": "nope"})
    assert (tokenize.status_code, tokenize.json()) == (404, response.json())  # vLLM's /tokenize checks it too
    served = httpx.get(f"{shared_base_url}/v1/models").json()["data"][0]["id"]
    for body in ({**prompt, "max_tokens": 2}, {**prompt, "model": served, "max_tokens": 2}):
        answer = httpx.post(f"{shared_base_url}{path}", json=body)
        assert answer.status_code == 200, answer.text
        assert answer.json()["model"] == served


def test_body_not_json_or_not_object(shared_base_url: str) -> None:
    bad_json = httpx.post(f"{shared_base_url}/v1/chat/completions", content=b"{nope", headers={"content-type": "application/json"})
    assert assert_error(bad_json, 400)["code"] == "invalid_json"
    not_object = httpx.post(f"{shared_base_url}/v1/chat/completions", json=[1, 2])
    assert assert_error(not_object, 400)["code"] == "invalid_body"


def test_body_size_limit_is_413(shared_base_url: str) -> None:
    big = {"messages": [{"role": "user", "content": "x" * 5000}]}
    assert assert_error(httpx.post(f"{shared_base_url}/v1/chat/completions", json=big), 413)["code"] == "body_too_large"

    def chunked() -> Iterator[bytes]:  # no Content-Length: the limit must hold while reading
        yield b'{"messages": [{"role": "user", "content": "'
        yield b"x" * 5000
        yield b'"}]}'

    response = httpx.post(f"{shared_base_url}/v1/chat/completions", content=chunked())
    assert assert_error(response, 413)["code"] == "body_too_large"


def test_a_large_upload_gets_413_and_the_connection_stays_usable(shared_base_url: str) -> None:
    with httpx.Client(base_url=shared_base_url, timeout=60.0) as client:
        response = client.post("/v1/completions", content=b"x" * (8 << 20), headers={"content-type": "application/json"})
        assert assert_error(response, 413)["code"] == "body_too_large"
        assert client.post("/v1/completions", json={"prompt": "a", "max_tokens": 2}).status_code == 200


ROUTES = {
    "/v1/chat/completions": {"POST"},
    "/v1/completions": {"POST"},
    "/v1/models": {"GET", "HEAD"},
    "/health": {"GET", "HEAD"},
    "/metrics": {"GET", "HEAD"},
}
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


@pytest.mark.parametrize(("path", "method"), [(p, m) for p in ROUTES for m in METHODS if m not in ROUTES[p]])
def test_wrong_method_is_a_json_405(shared_base_url: str, path: str, method: str) -> None:
    response = httpx.request(method, f"{shared_base_url}{path}")
    error = assert_error(response, 405)
    assert error["code"] == "method_not_allowed"
    assert response.headers["content-type"] == "application/json"
    assert set(response.headers["allow"].replace(" ", "").split(",")) == ROUTES[path]


@pytest.mark.parametrize("path", ["/", "/v1", "/v1/chat", "/v1/embeddings", "/v2/chat/completions", "/health/x"])
@pytest.mark.parametrize("method", ["GET", "POST", "DELETE"])
def test_unknown_path_is_a_json_404(shared_base_url: str, path: str, method: str) -> None:
    response = httpx.request(method, f"{shared_base_url}{path}")
    assert assert_error(response, 404)["code"] == "not_found"
    assert response.headers["content-type"] == "application/json"


def test_malformed_http_is_a_json_400(shared_base_url: str) -> None:
    import socket

    host, port = shared_base_url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30.0) as sock:
        sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 ")
    assert b"content-type: application/json" in head.lower()
    assert assert_error(httpx.Response(400, content=body), 400)["code"] == "invalid_http"


def test_unknown_fields_are_ignored(shared_base_url: str) -> None:
    body = {"messages": MESSAGES, "max_tokens": 2, "frequency_penalty": 0, "user": "u1", "tools": None}
    assert httpx.post(f"{shared_base_url}/v1/chat/completions", json=body).status_code == 200


async def test_queue_full_answers_429_quickly() -> None:
    engine = FakeEngine(max_running=1, max_waiting=1, paused=True)
    with serve_in_thread(make_app(engine)) as url:
        async with httpx.AsyncClient(base_url=url, timeout=60.0) as client:
            body = {"messages": MESSAGES, "max_tokens": 2}
            held = [asyncio.create_task(client.post("/v1/chat/completions", json=body)) for _ in range(2)]
            deadline = time.monotonic() + 30.0
            while (engine.stats().num_running, engine.stats().num_waiting) != (1, 1):
                assert time.monotonic() < deadline, "the engine never filled up"
                await asyncio.sleep(0.01)
            refused = await client.post("/v1/chat/completions", json=body)
            assert_error(refused, 429)
            refused_stream = await client.post("/v1/chat/completions", json={**body, "stream": True})
            assert refused_stream.status_code == 429
            engine.paused = False
            assert [r.status_code for r in await asyncio.gather(*held)] == [200, 200]


def test_engine_failure_mid_stream_is_an_error_event() -> None:
    with serve_in_thread(make_app(FakeEngine(fail_at_token=3))) as url:
        body = {"messages": MESSAGES, "stream": True}
        events = sse_payloads(httpx.post(f"{url}/v1/chat/completions", json=body).text)
        assert events[-1] == "[DONE]"
        assert events[-2]["error"]["type"] == "server_error"
        assert "".join(e["choices"][0]["delta"].get("content", "") for e in events[:-2]) == "Hel"
        failed = httpx.post(f"{url}/v1/chat/completions", json={"messages": MESSAGES})
        assert_error(failed, 500)


def test_unexpected_failure_is_a_json_500() -> None:
    class BrokenStats(FakeEngine):
        def stats(self) -> Any:
            if self.started:  # the app reads stats once when it is built
                raise RuntimeError("stats are broken")
            return super().stats()

    with serve_in_thread(make_app(BrokenStats())) as url:
        response = httpx.get(f"{url}/metrics")
        assert assert_error(response, 500)["code"] == "internal_error"
        assert "stats are broken" not in response.text  # the details go to the server's log only


@pytest.mark.parametrize("field", ["max_tokens", "seed", "min_tokens"])
def test_an_integer_past_64_bits_is_named_as_one(shared_base_url: str, field: str) -> None:
    # orjson reads this literal as a float: the error must not say the client sent one.
    raw = b'{"messages": [{"role": "user", "content": "hi"}], "%s": %d}' % (field.encode(), 2**70)
    response = httpx.post(f"{shared_base_url}/v1/chat/completions", content=raw,
                          headers={"content-type": "application/json"})
    error = assert_error(response, 400, field)
    assert "float" not in error["message"] and "2**63" in error["message"], error


def test_a_fractional_number_is_still_named_a_float(shared_base_url: str) -> None:
    response = httpx.post(f"{shared_base_url}/v1/chat/completions", json={"messages": MESSAGES, "max_tokens": 2.5})
    assert "got float" in assert_error(response, 400, "max_tokens")["message"]
