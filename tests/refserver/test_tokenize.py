"""`POST /tokenize`: vLLM's request and response shape, counting exactly what a generation request's
usage would report; off with `--no-tokenize-endpoint` (AppConfig.tokenize_endpoint)."""

from __future__ import annotations

import httpx
import pytest

from tests.refserver.fake_engine import make_app, serve_in_thread


def _client(**config: object) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=make_app(**config)), base_url="http://t")


async def test_a_prompt_counts_its_bytes_and_bos_unless_asked_not_to() -> None:
    async with _client() as c:
        resp = await c.post("/tokenize", json={"model": "goodput-tiny", "prompt": "héllo"})
        body = resp.json()
        assert resp.status_code == 200 and body["count"] == 7 == len(body["tokens"])  # bos + 6 bytes
        assert body["tokens"][0] == 256 and body["max_model_len"] == 4096
        plain = (await c.post("/tokenize", json={"prompt": "héllo", "add_special_tokens": False})).json()
        assert plain["count"] == 6


async def test_messages_count_as_the_chat_endpoint_counts_them() -> None:
    messages = [{"role": "system", "content": "be"}, {"role": "user", "content": "brief"}]
    with serve_in_thread(make_app()) as url:  # a generation needs the engine the app's lifespan starts
        async with httpx.AsyncClient(base_url=url) as c:
            counted = (await c.post("/tokenize", json={"messages": messages})).json()["count"]
            resp = await c.post("/v1/chat/completions", json={"messages": messages, "max_tokens": 1})
    assert counted == resp.json()["usage"]["prompt_tokens"] == 1 + 1 + 2 + 1 + 5 + 1


@pytest.mark.parametrize(("body", "needle"), [
    ({"model": "goodput-tiny"}, "'prompt' (a string) or 'messages' is required"),
    ({"prompt": "x", "add_special_tokens": "yes"}, "'add_special_tokens' must be a boolean"),
    ({"messages": [{"role": "robot", "content": "x"}]}, "messages[0].role"),
    ({"messages": [{"role": "user", "content": "x"}], "add_generation_prompt": False}, "add_generation_prompt"),
])
async def test_a_bad_body_is_a_400_naming_the_field(body: dict[str, object], needle: str) -> None:
    async with _client() as c:
        resp = await c.post("/tokenize", json=body)
        assert resp.status_code == 400 and needle in resp.json()["error"]["message"]


async def test_it_needs_the_key_and_can_be_turned_off() -> None:
    async with _client(api_key="k") as c:
        assert (await c.post("/tokenize", json={"prompt": "x"})).status_code == 401
        ok = await c.post("/tokenize", json={"prompt": "x"}, headers={"Authorization": "Bearer k"})
        assert ok.status_code == 200
    async with _client(tokenize_endpoint=False) as c:
        assert (await c.post("/tokenize", json={"prompt": "x"})).status_code == 404
