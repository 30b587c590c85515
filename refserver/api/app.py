"""The reference server's ASGI app (Starlette): OpenAI-compatible routes, `/health` and `/metrics`.

`create_app(engine, tokenizer, config)` builds it; the engine is started and stopped by the app's
lifespan. Routes: `POST /v1/chat/completions`, `POST /v1/completions`, `GET /v1/models`, `GET /health`,
`GET /metrics`, and `POST /tokenize` unless `config.tokenize_endpoint` is off. A request naming a model other
than the served names (`config.model_name` and `config.other_names`, the same weights) is refused as vLLM
refuses it (404, "The model `x` does not exist."); one that names none gets the first name. With `config.api_key` set, `/v1/*` needs `Authorization: Bearer <key>`. Every error,
also an unknown path (404), a wrong method (405) and an unexpected failure (500), has an OpenAI-style
JSON body.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from refserver.api.errors import APIError, model_not_found
from refserver.api.generate import Generation, Output
from refserver.api.protocol import Kind, parse_request
from refserver.api.state import AppConfig, ServerState, served_names
from refserver.api.streaming import ChunkBuilder, SSEResponse, stream_events, wait_for_disconnect
from refserver.api.timing import RequestTimes, final_goodput, llama_timings, usage
from refserver.api.tokenize import tokenize
from refserver.chat_template import ChatTemplate, load_chat_template
from refserver.engine.sim_runner import describe_engine
from refserver.engine.types import AsyncEngine
from refserver.faults import FaultConfig, FaultKind
from refserver.tokenizer import Tokenizer

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


def _injected_error(fault: FaultKind) -> APIError | None:
    if fault == "error_500":
        return APIError(500, "injected fault: internal error", type="server_error", code="injected_fault")
    if fault == "error_429":
        return APIError(429, "injected fault: too many requests", type="rate_limit_error", code="injected_fault")
    return None


async def _generate(request: Request, kind: Kind) -> Response | SSEResponse | _DropResponse:
    arrival_s = time.perf_counter()
    state = _state(request)
    try:
        state.check_auth(request)
        fault = state.injector.draw()
        injected = _injected_error(fault)
        if injected is not None:
            raise injected
        req = parse_request(await state.read_json(request), kind)
        if req.model is not None and req.model not in served_names(state.config):  # as vLLM: none = the first
            raise model_not_found(req.model)
        prompt_ids = state.prompt_ids(req)
        params = state.sampling_params(req, len(prompt_ids))
        times = RequestTimes(arrival_s=arrival_s, num_prompt_tokens=len(prompt_ids))
        request_id = f"{'chatcmpl' if kind == 'chat' else 'cmpl'}-{uuid.uuid4().hex}"
        generation = Generation(
            engine=state.engine,
            metrics=state.metrics,
            tokenizer=state.tokenizer,
            request_id=request_id,
            prompt_ids=prompt_ids,
            params=params,
            stop=req.stop,
            times=times,
        )
        await generation.start()
    except APIError as error:
        return _error_response(error)
    builder = ChunkBuilder(req, request_id=request_id, model=req.model or state.config.model_name, times=times)
    if req.stream:
        return SSEResponse(stream_events(generation, builder, state.config.faults, fault))
    return await _complete(request, generation, builder, fault, state.config.faults)


async def _collect(generation: Generation) -> tuple[str, str]:
    parts: list[str] = []
    last = Output("", 0)
    async for output in generation.outputs():
        parts.append(output.text)
        last = output
    return "".join(parts), last.finish_reason or "stop"


async def _complete(
    request: Request, generation: Generation, builder: ChunkBuilder, fault: FaultKind, faults: FaultConfig
) -> Response | _DropResponse:
    """A non-streaming response; the client leaving cancels the generation (and frees its blocks)."""
    collect = asyncio.ensure_future(_collect(generation))
    watch = asyncio.ensure_future(wait_for_disconnect(request.receive))
    try:
        await asyncio.wait({collect, watch}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        collect.cancel()
        raise
    finally:
        watch.cancel()
    if not collect.done():  # the client left first
        collect.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await collect
        return Response(status_code=499)  # nobody reads it; returning a response keeps the ASGI server quiet
    try:
        text, reason = collect.result()
    except APIError as error:
        return _error_response(error)
    times = generation.times
    delay = faults.first_token_delay_s + faults.token_delay_s * times.num_output_tokens
    if fault == "stall":
        delay += faults.stall_s
    if delay > 0:
        await asyncio.sleep(delay)
    if fault == "disconnect":
        return _DropResponse()
    if fault == "malformed":
        return Response(b'{"id": "broken", "choices": [', media_type="application/json")
    return JSONResponse(_completion_body(builder, text, reason, times))


def _completion_body(builder: ChunkBuilder, text: str, reason: str, times: RequestTimes) -> dict[str, Any]:
    if builder.chat:
        choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": text}}
    else:
        choice = {"index": 0, "text": text}
    choice.update(logprobs=None, finish_reason=reason)
    body = dict(builder.base)
    body["object"] = "chat.completion" if builder.chat else "text_completion"
    body.update(
        choices=[choice],
        usage=usage(times),
        goodput=final_goodput(times, time.perf_counter(), times.num_output_tokens),
        timings=llama_timings(times),
    )
    return body


class _DropResponse:
    """Starts a response and returns without its body: the ASGI server then closes the connection."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(b"content-type", b"application/json"), (b"content-length", b"64")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})


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
        model: dict[str, Any] = {
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
        Route("/v1/models", models, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
    ]
    if config.tokenize_endpoint:
        routes.append(Route("/tokenize", tokenize, methods=["POST"]))
    handlers = {HTTPException: _http_exception, Exception: _unexpected_error}
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers=handlers)
    app.state.server = state
    return app
