"""The routes of the Responses API (`POST /v1/responses`) and Anthropic's Messages API (`POST /v1/messages`):
the same admission, engine, scheduler and `/metrics` as chat, each API's own body, events and errors.

A refusal before the stream starts is an HTTP status with the API's error body: OpenAI's
`{"error": {...}}` for Responses, `{"type": "error", "error": {"type", "message"}}` for Messages.
"""

from __future__ import annotations

import time

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from refserver.api.errors import APIError
from refserver.api.handling import DropResponse, admit, complete
from refserver.api.messages_protocol import parse_messages_request
from refserver.api.messages_stream import MessageBuilder, messages_error_response, messages_events
from refserver.api.responses_protocol import parse_responses_request
from refserver.api.responses_stream import ResponseBuilder, responses_events
from refserver.api.state import ServerState
from refserver.api.streaming import SSEResponse


def _openai_error(error: APIError) -> JSONResponse:
    headers = {"connection": "close"} if error.status == 413 else None
    return JSONResponse(error.body(), status_code=error.status, headers=headers)


async def responses(request: Request) -> Response | SSEResponse | DropResponse:
    arrival_s = time.perf_counter()
    state: ServerState = request.app.state.server
    try:
        admitted = await admit(request, state, parse_responses_request, id_prefix="resp_", arrival_s=arrival_s)
    except APIError as error:
        return _openai_error(error)
    builder = ResponseBuilder(request_id=admitted.request_id,
                              model=admitted.request.model or state.config.model_name,
                              max_output_tokens=admitted.request.max_tokens, times=admitted.times)
    if admitted.request.stream:
        events = responses_events(admitted.generation, admitted.plan, builder, state.config.faults, admitted.fault)
        return SSEResponse(events)
    return await complete(request, state, admitted, builder.complete_body, _openai_error)


async def messages(request: Request) -> Response | SSEResponse | DropResponse:
    arrival_s = time.perf_counter()
    state: ServerState = request.app.state.server
    try:
        admitted = await admit(request, state, parse_messages_request, id_prefix="msg_", arrival_s=arrival_s)
    except APIError as error:
        return messages_error_response(error)
    builder = MessageBuilder(request_id=admitted.request_id, model=admitted.request.model or state.config.model_name,
                             times=admitted.times)
    if admitted.request.stream:
        events = messages_events(admitted.generation, admitted.plan, builder, state.config.faults, admitted.fault)
        return SSEResponse(events)
    return await complete(request, state, admitted, builder.complete_body, messages_error_response)
