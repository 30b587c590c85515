"""GET /v1/goodput/steps?after=N: the engine's recent steps (refserver.engine.step_log), for calibration.

404 when the engine keeps no step log (an engine built without one), 400 for an `after` that is not a
whole number ≥ 0. Auth as every /v1 route.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from refserver.api.errors import APIError
from refserver.api.state import ServerState
from refserver.engine import StepLog


def step_log_of(engine: object) -> StepLog | None:
    """The step log of an AsyncLLMEngine's engine; None for another AsyncEngine or an engine without one."""
    log = getattr(getattr(engine, "engine", None), "step_log", None)
    return log if isinstance(log, StepLog) else None


async def engine_steps(request: Request) -> Response:
    state: ServerState = request.app.state.server
    try:
        state.check_auth(request)
        log = step_log_of(state.engine)
        if log is None:
            raise APIError(404, "this engine keeps no step log", code="not_found")
        raw = request.query_params.get("after", "0")
        if not raw.isdigit():
            raise APIError(400, f"after must be a whole number >= 0, got {raw!r}", code="invalid_after")
    except APIError as error:
        return JSONResponse(error.body(), status_code=error.status)
    return JSONResponse(log.after(int(raw)))
