"""`POST /tokenize`: how this server counts a prompt, in vLLM's shape (SGLang answers the same).

    {"model"?, "prompt": "text", "add_special_tokens"?: true}
    {"model"?, "messages": [...], "add_generation_prompt"?: true}
    → {"count": N, "max_model_len": M, "tokens": [ids]}

A prompt is encoded as `/v1/completions` encodes it (bos unless `add_special_tokens` is false); messages
as `/v1/chat/completions` does (the chat template, generation prompt included), so `count` is exactly the
`usage.prompt_tokens` that request would report. A model other than the served one is refused as the
generation routes refuse it (404), as vLLM does. Load generators size prompts with it
(`goodput run --prompt-sizing`); `goodput serve --no-tokenize-endpoint` turns it off (404).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from refserver.api.errors import APIError, bad_request, model_not_found
from refserver.api.json_object import JSONObject
from refserver.api.protocol import parse_messages
from refserver.api.state import ServerState, served_names


def _flag(body: JSONObject, name: str, default: bool) -> bool:
    value = body.read_bool(name)
    return default if value is None else value


def token_ids(state: ServerState, raw: object) -> list[int]:
    """The ids a tokenize request's prompt or messages become; a 400 APIError for a bad body."""
    body = JSONObject.of_body(raw)
    model = body.get("model")
    if model is not None and model not in served_names(state.config):  # as vLLM's /tokenize: another is a 404
        raise model_not_found(str(model))
    if "messages" in body:
        if not _flag(body, "add_generation_prompt", True):
            raise bad_request("only 'add_generation_prompt': true is supported by this server",
                              param="add_generation_prompt")
        messages = parse_messages(body)
        try:
            text = state.template.render(messages)
        except Exception as exc:  # a model's own template may reject a conversation
            raise bad_request(f"the chat template failed on these messages: {exc}", param="messages") from None
        return state.tokenizer.encode(text, add_bos=state.template.add_bos)
    prompt = body.get("prompt")
    if not isinstance(prompt, str):
        raise bad_request("'prompt' (a string) or 'messages' is required", param="prompt",
                          code="missing_required_parameter")
    return state.tokenizer.encode(prompt, add_bos=_flag(body, "add_special_tokens", True))


async def tokenize(request: Request) -> Response:
    state: ServerState = request.app.state.server
    try:
        state.check_auth(request)
        ids = token_ids(state, await state.read_json(request))
    except APIError as error:
        return JSONResponse(error.body(), status_code=error.status)
    return JSONResponse({"count": len(ids), "max_model_len": state.config.max_model_len, "tokens": ids})
