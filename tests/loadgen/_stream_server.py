"""The scripted test server (tests/servers/scripted.py) answering every chat request with a paced stream, on
its own event loop in a background thread, for tests that run `goodput run` as a subprocess against it.

    with paced_server(first_s=0.02, gap_s=0.005) as srv: ... srv.url ... len(srv.requests) ...

Each answer: the response head at once, `max_tokens` content chunks (the first `first_s` after the request
arrived, then one every `gap_s`, each with running usage), a finish chunk, [DONE]. The usage has vLLM's
shape: `prompt_tokens_details.cached_tokens` only when `cached` is given (vLLM started with
--enable-prompt-tokens-details), no such field otherwise. `GET /metrics` answers `metrics` when given,
404 otherwise (a server without Prometheus metrics). The server stops when
the block ends, also on failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator

from tests.servers.scripted import (
    DONE,
    END,
    Action,
    Handler,
    ReceivedRequest,
    ScriptedServer,
    Send,
    chat_chunk,
    chunk,
    event,
    head,
    usage,
)


def paced_stream(first_s: float, gap_s: float, prompt_tokens: int = 16, cached: int | None = None,
                 metrics: str | None = None):
    def handler(request: ReceivedRequest) -> list[Action]:
        if request.method == "GET" and request.path == "/metrics" and metrics is not None:
            body = metrics.encode()
            return [Send(head(200, "text/plain; version=0.0.4", chunked=False, length=len(body)) + body)]
        if request.method != "POST":  # nothing but the streams here (no /v1/models; /metrics only if given)
            return [Send(head(404, "text/plain", chunked=False, length=0))]
        n = int(request.json().get("max_tokens") or 4)
        actions: list[Action] = [Send(head())]
        for j in range(n):
            actions.append(Send(chunk(event(chat_chunk(" tok", usage=usage(prompt_tokens, j + 1, cached)))),
                                at_s=first_s + j * gap_s))
        last = first_s + n * gap_s
        actions.append(Send(chunk(event(chat_chunk(finish_reason="length", usage=usage(prompt_tokens, n, cached))))
                            + chunk(DONE) + END, at_s=last))
        return actions

    return handler


class _Running:
    def __init__(self, server: ScriptedServer) -> None:
        self.server = server

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def requests(self) -> list[ReceivedRequest]:
        return self.server.requests


@contextlib.contextmanager
def paced_server(*, first_s: float = 0.02, gap_s: float = 0.005, cached: int | None = None,
                 metrics: str | None = None) -> Iterator[_Running]:
    with threaded_server(paced_stream(first_s, gap_s, cached=cached, metrics=metrics)) as server:
        yield server


@contextlib.contextmanager
def threaded_server(handler: Handler) -> Iterator[_Running]:
    """A ScriptedServer answering with `handler`, on its own loop in a background thread."""
    ready = threading.Event()
    holder: dict[str, object] = {}

    async def main() -> None:
        stop = asyncio.Event()
        holder["stop"], holder["loop"] = stop, asyncio.get_running_loop()
        async with ScriptedServer(handler) as server:
            holder["server"] = server
            ready.set()
            await stop.wait()

    thread = threading.Thread(target=lambda: asyncio.run(main()), name="scripted-server", daemon=True)
    thread.start()
    try:
        if not ready.wait(30):
            raise RuntimeError("the scripted server did not start")
        yield _Running(holder["server"])  # type: ignore[arg-type]
    finally:
        loop, stop = holder.get("loop"), holder.get("stop")
        if loop is not None and stop is not None:
            loop.call_soon_threadsafe(stop.set)  # type: ignore[attr-defined]
        thread.join(30)
