"""Image parts on the text-only reference server: each `image_url` part counts IMAGE_TOKENS prompt tokens
(a function of its URL), so image requests run end to end; malformed parts are a 400 in OpenAI's shape."""

from __future__ import annotations

from typing import Any

import httpx

from refserver.api.images import IMAGE_TOKENS, image_token_ids

PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"


def chat(base_url: str, content: Any) -> httpx.Response:
    body = {"messages": [{"role": "user", "content": content}], "max_tokens": 2}
    return httpx.post(f"{base_url}/v1/chat/completions", json=body, timeout=30.0)


def image(url: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": url}}


def test_each_image_adds_its_tokens_to_the_prompt(base_url: str) -> None:
    text = chat(base_url, "Describe").json()["usage"]["prompt_tokens"]
    one = chat(base_url, [{"type": "text", "text": "Describe"}, image(PNG)]).json()["usage"]
    two = chat(base_url, [{"type": "text", "text": "Describe"}, image(PNG), image("https://example.test/x.jpg")])
    assert one["prompt_tokens"] == text + IMAGE_TOKENS
    assert two.json()["usage"]["prompt_tokens"] == text + 2 * IMAGE_TOKENS
    bare = chat(base_url, [{"type": "image_url", "image_url": PNG}])  # the URL alone, as some clients send it
    assert bare.status_code == 200


def test_image_tokens_are_a_function_of_the_url() -> None:
    assert image_token_ids([PNG], 256) == image_token_ids([PNG], 256)
    assert image_token_ids([PNG], 256) != image_token_ids([PNG + "A"], 256)
    ids = image_token_ids([PNG, "https://example.test/x.jpg"], 300)
    assert len(ids) == 2 * IMAGE_TOKENS and all(0 <= i < 300 for i in ids)


def test_a_part_without_a_url_is_a_400(base_url: str) -> None:
    for part in ({"type": "image_url"}, {"type": "image_url", "image_url": {"url": ""}}, {"type": "input_audio"}):
        response = chat(base_url, [part])
        assert response.status_code == 400
        error = response.json()["error"]
        assert error["param"] == "messages[0].content" and error["type"] == "invalid_request_error"
