"""The steps every generating route shares, whichever API it speaks: admission (auth, injected faults,
the body, the model, the prompt, sampling, the answer's plan, the engine's admission) and the
non-streaming answer (collected while watching for the client leaving, with the fault delays).

Each API passes its own body parser and its own error shape; so a bad request on `/v1/messages` is
answered as the Messages API answers it, and one on `/v1/chat/completions` as OpenAI does.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from refserver.api.behaviour import TurnPlan
from refserver.api.errors import APIError, model_not_found
from refserver.api.faults import FaultKind
from refserver.api.generate import Generation
from refserver.api.messages_wire import MessageObject
from refserver.api.openai_wire import CompletionBody
from refserver.api.protocol import GenerationRequest
from refserver.api.responses_wire import ResponseObject
from refserver.api.state import ServerState, served_names
from refserver.api.streaming import wait_for_disconnect
from refserver.api.timing import RequestTimes
from refserver.api.turn import Answer, collect

ErrorShape = Callable[[APIError], Response]


@dataclass(slots=True)
class Admitted:
    request: GenerationRequest
    generation: Generation
    plan: TurnPlan
    times: RequestTimes
    request_id: str
    fault: FaultKind


def injected_error(fault: FaultKind) -> APIError | None:
    if fault == "error_500":
        return APIError(500, "injected fault: internal error", type="server_error", code="injected_fault")
    if fault == "error_429":
        return APIError(429, "injected fault: too many requests", type="rate_limit_error", code="injected_fault")
    return None


async def admit(
    request: Request,
    state: ServerState,
    parse: Callable[[object], GenerationRequest],
    *,
    id_prefix: str,
    arrival_s: float,
) -> Admitted:
    """Everything before the first byte of the response; raises `APIError` for any refusal."""
    state.check_auth(request)
    fault = state.injector.draw()
    injected = injected_error(fault)
    if injected is not None:
        raise injected
    req = parse(await state.read_json(request))
    if req.model is not None and req.model not in served_names(state.config):  # as vLLM: none = the first
        raise model_not_found(req.model)
    prompt_ids = state.prompt_ids(req)
    params = state.sampling_params(req, len(prompt_ids))
    plan = TurnPlan()
    if req.kind != "completion":
        plan = state.config.behaviour.plan(request_seed=req.seed, tools=req.tools, tool_choice=req.tool_choice)
    if plan.reasoning_tokens:  # a reasoning model answers after it reasons: no eos among the reasoning
        floor = min(params.max_tokens, max(params.min_tokens, plan.reasoning_tokens + 1))
        params = dataclasses.replace(params, min_tokens=floor)
    times = RequestTimes(arrival_s=arrival_s, num_prompt_tokens=len(prompt_ids))
    request_id = f"{id_prefix}{uuid.uuid4().hex}"
    generation = Generation(
        engine=state.engine,
        metrics=state.metrics,
        tokenizer=state.tokenizer,
        request_id=request_id,
        prompt_ids=prompt_ids,
        params=params,
        stop=req.stop,
        times=times,
        reasoning_tokens=plan.reasoning_tokens,
    )
    await generation.start()
    return Admitted(req, generation, plan, times, request_id, fault)


async def complete(
    request: Request,
    state: ServerState,
    admitted: Admitted,
    build: Callable[[Answer], CompletionBody | ResponseObject | MessageObject],
    error_shape: ErrorShape,
) -> Response | DropResponse:
    """A non-streaming response; the client leaving cancels the generation (and frees its blocks)."""
    faults = state.config.faults
    answer_task = asyncio.ensure_future(collect(admitted.generation, admitted.plan))
    watch = asyncio.ensure_future(wait_for_disconnect(request.receive))
    try:
        await asyncio.wait({answer_task, watch}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        answer_task.cancel()
        raise
    finally:
        watch.cancel()
    if not answer_task.done():  # the client left first
        answer_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await answer_task
        return Response(status_code=499)  # nobody reads it; returning a response keeps the ASGI server quiet
    try:
        answer = answer_task.result()
    except APIError as error:
        return error_shape(error)
    delay = faults.first_token_delay_s + faults.token_delay_s * admitted.times.num_output_tokens
    if admitted.fault == "stall":
        delay += faults.stall_s
    if delay > 0:
        await asyncio.sleep(delay)
    if admitted.fault == "disconnect":
        return DropResponse()
    if admitted.fault == "malformed":
        return Response(b'{"id": "broken", "choices": [', media_type="application/json")
    return JSONResponse(build(answer))


class DropResponse:
    """Starts a response and returns without its body: the ASGI server then closes the connection."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(b"content-type", b"application/json"), (b"content-length", b"64")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
