"""A request body read with a size limit, refused so that the client can read the refusal.

A client that sends a body over `--max-body-bytes` with its headers (as every HTTP client does) is still
writing when the server decides: a server that answers 413 and closes at once leaves unread bytes in its
socket, the kernel answers them with a reset, and the client sees "connection reset" instead of the 413
(it reads the answer only if it happened to pause). So the rest of the body is read and thrown away, up
to DISCARD_BYTES more (a declared Content-Length beyond that is refused at once), and the 413 then closes
the connection. The body deadline of `connection_guard` bounds how long the discarding may take.
"""

from __future__ import annotations

from starlette.requests import ClientDisconnect, Request

from refserver.api.errors import APIError, body_too_large

DISCARD_BYTES = 64 << 20  # read and dropped after the limit; also goodput's own largest request body


async def read_body(request: Request, limit: int) -> bytes:
    """The body, at most `limit` bytes; 413 (`body_too_large`) past it, 400 if the client left."""
    declared = request.headers.get("content-length")
    size = int(declared) if declared is not None and declared.isdigit() else None
    if size is not None and size > limit + DISCARD_BYTES:
        raise body_too_large(f"request body of {size} bytes exceeds the limit of {limit}")
    body = bytearray()
    received = 0
    try:
        async for chunk in request.stream():
            received += len(chunk)
            if received <= limit:
                body += chunk
            elif received > limit + DISCARD_BYTES:
                break  # enough read: the connection closes with the 413 regardless
    except ClientDisconnect:  # the client left, or its body timed out: nobody reads this answer
        raise APIError(400, "the client disconnected before the request body was complete",
                       code="client_disconnected") from None
    if size is not None and size > limit:
        raise body_too_large(f"request body of {size} bytes exceeds the limit of {limit}")
    if received > limit:
        raise body_too_large(f"request body exceeds the limit of {limit} bytes")
    return bytes(body)
