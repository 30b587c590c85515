"""The reference server's ASGI app (Starlette): OpenAI-compatible routes, `/health` and `/metrics`.

`create_app(engine, tokenizer, config)` builds it; the engine is started and stopped by the app's
lifespan. Routes: `POST /v1/chat/completions`, `POST /v1/completions`, `POST /v1/responses` and
`POST /v1/messages` (apis.py), `GET /v1/models`, `GET /v1/goodput/steps` (steps_route.py), `GET /health`,
`GET /metrics`, and `POST /tokenize` unless `config.tokenize_endpoint` is off. A request naming a model other
than the served names (`config.model_name` and `config.other_names`, the same weights) is refused as vLLM
refuses it (404, "The model `x` does not exist."); one that names none gets the first name. With `config.api_key` set, `/v1/*` needs `Authorization: Bearer <key>`. Every error,
also an unknown path (404), a wrong method (405) and an unexpected failure (500), has an OpenAI-style
JSON body.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from refserver.api.apis import messages, responses
from refserver.api.errors import APIError
from refserver.api.handling import DropResponse, admit, complete
from refserver.api.openai_wire import (
    ChatChoice,
    ChatMessage,
    CompletionBody,
    FunctionCall,
    ModelCard,
    TextChoice,
)
from refserver.api.protocol import Kind, parse_request
from refserver.api.state import AppConfig, ServerState, served_names
from refserver.api.steps_route import engine_steps
from refserver.api.streaming import ChunkBuilder, SSEResponse, chat_finish_reason, stream_events
from refserver.api.timing import final_goodput, llama_timings, usage
from refserver.api.tokenize import tokenize
from refserver.api.turn import Answer
from refserver.engine import AsyncEngine, describe_engine
from refserver.text import ChatTemplate, Tokenizer, load_chat_template

__all__ = ["AppConfig", "create_app"]  # AppConfig lives in state.py; importing it from here keeps working


def _state(request: Request) -> ServerState:
    state: ServerState = request.app.state.server
    return state


def _error_response(error: APIError) -> JSONResponse:
    # A body over the limit was not all read (refserver.api.body): the connection cannot serve another request.
    headers = {"connection": "close"} if error.status == 413 else None
    return JSONResponse(error.body(), status_code=error.status, headers=headers)


async def _http_exception(request: Request, exc: Exception) -> Response:
    """Starlette's own refusals (no such route, a method the route does not take) as OpenAI-style errors."""
    assert isinstance(exc, HTTPException)
    where = f"{request.method} {request.url.path}"
    if exc.status_code == 404:
        error = APIError(404, f"no route {where}", code="not_found")
    elif exc.status_code == 405:
        allowed = (exc.headers or {}).get("Allow", "")
        error = APIError(405, f"method not allowed: {where} (allowed: {allowed})", code="method_not_allowed")
    else:
        error = APIError(exc.status_code, f"{exc.detail} ({where})", code=None)
    return JSONResponse(error.body(), status_code=error.status, headers=exc.headers)


async def _unexpected_error(request: Request, exc: Exception) -> Response:
    """A failure nothing else handled: a JSON 500 (the traceback still goes to the server's log)."""
    return _error_response(APIError(500, "internal server error", type="server_error", code="internal_error"))


async def _generate(request: Request, kind: Kind) -> Response | SSEResponse | DropResponse:
    arrival_s = time.perf_counter()
    state = _state(request)
    try:
        admitted = await admit(
            request,
            state,
            lambda body: parse_request(body, kind),
            id_prefix="chatcmpl-" if kind == "chat" else "cmpl-",
            arrival_s=arrival_s,
        )
    except APIError as error:
        return _error_response(error)
    builder = ChunkBuilder(
        admitted.request, request_id=admitted.request_id, model=admitted.request.model or state.config.model_name,
        times=admitted.times,
    )
    builder.reasons = kind == "chat" and state.config.behaviour.reasons
    faults = state.config.faults
    if admitted.request.stream:
        return SSEResponse(stream_events(admitted.generation, builder, faults, admitted.fault, admitted.plan))
    return await complete(request, state, admitted, lambda answer: _completion_body(builder, answer), _error_response)


def _completion_body(builder: ChunkBuilder, answer: Answer) -> CompletionBody:
    assert answer.finish is not None
    times = builder.times
    finish_reason = chat_finish_reason(answer.finish)
    choices: list[ChatChoice | TextChoice]
    if builder.chat:
        message: ChatMessage = {"role": "assistant", "content": answer.text}
        if builder.reasons:
            message["reasoning_content"] = answer.reasoning
        if answer.call is not None:
            message["content"] = None
            function: FunctionCall = {"name": answer.call.tool.name, "arguments": answer.arguments}
            message["tool_calls"] = [{"id": answer.call.call_id, "type": "function", "function": function}]
        choices = [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}]
    else:
        choices = [{"index": 0, "text": answer.text, "logprobs": None, "finish_reason": finish_reason}]
    return {
        **builder.base,
        "object": "chat.completion" if builder.chat else "text_completion",
        "choices": choices,
        "usage": usage(times, reasoning=builder.reasons),
        "goodput": final_goodput(times, time.perf_counter(), times.num_output_tokens),
        "timings": llama_timings(times),
    }


async def chat_completions(request: Request) -> Any:
    return await _generate(request, "chat")


async def completions(request: Request) -> Any:
    return await _generate(request, "completion")


async def models(request: Request) -> Response:
    state = _state(request)
    try:
        state.check_auth(request)
    except APIError as error:
        return _error_response(error)
    sim = describe_engine(state.engine)
    data = []
    for name in served_names(state.config):  # every name, the same weights (as vLLM lists each served name)
        model: ModelCard = {
            "id": name,
            "object": "model",
            "created": state.created,
            "owned_by": "goodput",
            "max_model_len": state.config.max_model_len,
        }
        if sim is not None:  # say so: a client must be able to tell a simulation from a real model
            model["engine"] = "sim"
            model["sim"] = sim
        data.append(model)
    return JSONResponse({"object": "list", "data": data})


async def health(request: Request) -> Response:
    return Response(status_code=200)


async def metrics(request: Request) -> Response:
    from prometheus_client import CONTENT_TYPE_LATEST

    return Response(_state(request).metrics.exposition(), media_type=CONTENT_TYPE_LATEST)


def create_app(
    engine: AsyncEngine,
    tokenizer: Tokenizer,
    config: AppConfig | None = None,
    *,
    chat_template: ChatTemplate | None = None,
) -> Starlette:
    config = config or AppConfig()
    template = chat_template or load_chat_template(None, tokenizer)
    state = ServerState(engine, tokenizer, template, config)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await engine.start()
        try:
            yield
        finally:
            await engine.stop()

    routes = [
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/completions", completions, methods=["POST"]),
        Route("/v1/responses", responses, methods=["POST"]),
        Route("/v1/messages", messages, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
        Route("/v1/goodput/steps", engine_steps, methods=["GET"]),
    ]
    if config.tokenize_endpoint:
        routes.append(Route("/tokenize", tokenize, methods=["POST"]))
    handlers = {HTTPException: _http_exception, Exception: _unexpected_error}
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers=handlers)
    app.state.server = state
    return app
