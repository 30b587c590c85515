"""OpenAI-style error bodies: `{"error": {"message", "type", "param", "code"}}`.

Before a stream starts, an `APIError` becomes an HTTP response with its status; after the first byte,
it is sent as one SSE event `data: {"error": {...}}` followed by `data: [DONE]`.
"""

from __future__ import annotations

from typing import TypedDict


class ErrorDetail(TypedDict):
    message: str
    type: str
    param: str | None
    code: str | int | None


class ErrorBody(TypedDict):
    """OpenAI's error body (also the data of the SSE event of a failure after the stream started)."""

    error: ErrorDetail


class APIError(Exception):
    """A request the server refuses or could not finish, with what the client needs to know why."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        param: str | None = None,
        code: str | int | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code

    def body(self) -> ErrorBody:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


def bad_request(message: str, *, param: str | None = None, code: str = "invalid_value") -> APIError:
    return APIError(400, message, param=param, code=code)


def body_too_large(message: str) -> APIError:
    return APIError(413, message, code="body_too_large")


def model_not_found(name: str) -> APIError:
    """vLLM's answer to a model name it does not serve: 404, its error type as `type`, the status as `code`."""
    return APIError(404, f"The model `{name}` does not exist.", type="NotFoundError", param="model", code=404)


def unauthorized() -> APIError:
    return APIError(401, "Invalid or missing API key.", type="authentication_error", code="invalid_api_key")


def queue_full() -> APIError:
    return APIError(429, "The server's waiting queue is full; retry later.", type="rate_limit_error", code="queue_full")


def server_error(message: str, *, code: str = "internal_error") -> APIError:
    return APIError(500, message, type="server_error", code=code)
