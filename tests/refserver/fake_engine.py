"""A deterministic `AsyncEngine` for the HTTP layer's tests: scripted output, no model, no thread.

Each request outputs the token ids of `script` one per step (then eos, finish "stop"; or cycles with
`ignore_eos`), honours max_tokens ("length"), min_tokens and stop_token_ids, holds "KV blocks" while
running, and has a toy prefix cache (whole blocks of earlier prompts count as cached). `max_running`
and `max_waiting` bound it like the real engine (QueueFullError past the waiting limit, raised before
the iterator's first await). `paused` holds running requests before their next token.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from refserver.engine.types import EngineStats, FinishReason, QueueFullError, SamplingParams, TokenEvent
from refserver.text.tokenizer import EOS_ID

if TYPE_CHECKING:
    from refserver.api.connection_guard import ConnectionLimits

DEFAULT_SCRIPT = list(b"Hello, world! ")


@dataclass(slots=True)
class _Live:
    prompt_len: int
    blocks: int = 0
    aborted: bool = False


@dataclass
class FakeEngine:
    script: list[int] = field(default_factory=lambda: list(DEFAULT_SCRIPT))
    step_s: float = 0.0
    max_running: int = 64
    max_waiting: int = 64
    block_size: int = 16
    num_blocks: int = 4096
    fail_at_token: int | None = None  # raise RuntimeError when producing this output token (0-based)
    paused: bool = False
    started: bool = False
    live: dict[str, _Live] = field(default_factory=dict)
    aborted: list[str] = field(default_factory=list)  # aborts that stopped a live request
    abort_calls: list[str] = field(default_factory=list)  # every abort() call, also for ended requests
    finished: dict[str, FinishReason] = field(default_factory=dict)
    _cached_prefixes: set[tuple[int, ...]] = field(default_factory=set)
    _running: int = 0
    _waiting: int = 0
    _queries: int = 0
    _hits: int = 0
    _slots: asyncio.Semaphore | None = None

    async def start(self) -> None:
        self.started = True
        self._slots = asyncio.Semaphore(self.max_running)

    async def stop(self) -> None:
        self.started = False

    def abort(self, request_id: str) -> None:
        self.abort_calls.append(request_id)
        live = self.live.get(request_id)
        if live is not None and not live.aborted:
            live.aborted = True
            self.aborted.append(request_id)

    def stats(self) -> EngineStats:
        used = sum(live.blocks for live in self.live.values())
        return EngineStats(
            num_running=self._running,
            num_waiting=self._waiting,
            kv_usage=used / self.num_blocks,
            num_free_blocks=self.num_blocks - used,
            num_total_blocks=self.num_blocks,
            prefix_queries_tokens=self._queries,
            prefix_hit_tokens=self._hits,
            num_preemptions=0,
        )

    def _cached_tokens(self, prompt: list[int]) -> int:
        full_blocks = (len(prompt) - 1) // self.block_size  # the last prompt token is always computed
        cached = 0
        for k in range(1, full_blocks + 1):
            if tuple(prompt[: k * self.block_size]) not in self._cached_prefixes:
                break
            cached = k * self.block_size
        for k in range(1, full_blocks + 1):
            self._cached_prefixes.add(tuple(prompt[: k * self.block_size]))
        self._queries += len(prompt)
        self._hits += cached
        return cached

    async def generate(
        self, request_id: str, prompt_token_ids: list[int], params: SamplingParams
    ) -> AsyncIterator[TokenEvent]:
        if self._slots is None:
            raise RuntimeError("FakeEngine.start() was not awaited")
        if self._waiting >= self.max_waiting:
            raise QueueFullError(f"{self._waiting} requests waiting")
        arrival = time.perf_counter()
        live = self.live[request_id] = _Live(prompt_len=len(prompt_token_ids))
        self._waiting += 1
        try:
            await self._slots.acquire()
        except BaseException:
            self._waiting -= 1
            self.live.pop(request_id, None)
            raise
        self._waiting -= 1
        self._running += 1
        try:
            async for event in self._run(request_id, live, prompt_token_ids, params, arrival):
                yield event
        finally:
            self._running -= 1
            self._slots.release()
            self.live.pop(request_id, None)

    async def _run(
        self, request_id: str, live: _Live, prompt: list[int], params: SamplingParams, arrival: float
    ) -> AsyncIterator[TokenEvent]:
        scheduled = time.perf_counter()
        cached = self._cached_tokens(prompt)
        live.blocks = -(-len(prompt) // self.block_size)
        first: float | None = None
        produced = 0

        def event(ids: list[int], reason: FinishReason | None) -> TokenEvent:
            nonlocal first
            now = time.perf_counter()
            if first is None and ids:
                first = now  # like the real engine: the end of the step that produced the first token
            if reason is not None:
                self.finished[request_id] = reason
            return TokenEvent(ids, reason is not None, reason, len(prompt), cached, arrival, scheduled, first, now)

        while True:
            await asyncio.sleep(self.step_s)
            # A flag, not an asyncio.Event: tests flip it from another thread than the server's loop.
            while self.paused and not live.aborted:  # noqa: ASYNC110
                await asyncio.sleep(0.001)
            if live.aborted:
                yield event([], "abort")
                return
            if self.fail_at_token is not None and produced == self.fail_at_token:
                raise RuntimeError("fake engine failure")
            token = self._token(produced, params)
            produced += 1
            live.blocks = -(-(len(prompt) + produced) // self.block_size)
            stop_ids = set(params.stop_token_ids) | (set() if params.ignore_eos else {EOS_ID})
            if token in stop_ids and produced > params.min_tokens:
                yield event([token], "stop")
                return
            if produced >= params.max_tokens:
                yield event([token], "length")
                return
            yield event([token], None)

    def _token(self, index: int, params: SamplingParams) -> int:
        if index < len(self.script):
            return self.script[index]
        if params.ignore_eos or index < params.min_tokens:
            return self.script[index % len(self.script)] if self.script else 0
        return EOS_ID


@contextmanager
def serve_in_thread(app: Any, limits: ConnectionLimits | None = None) -> Iterator[str]:
    """Run an ASGI app on a free loopback port in a thread, configured as `goodput serve` configures
    uvicorn (with `limits`, default: the server's); yield its base URL; stop it."""
    import uvicorn

    from refserver.api.serve import bind_socket, server_config, url_of

    sock = bind_socket("127.0.0.1", 0)
    server = uvicorn.Server(server_config(app, limits=limits, log_level="critical", graceful_shutdown_s=2))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 60.0
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("test server did not start")
            time.sleep(0.005)
        yield url_of(sock)
    finally:
        server.should_exit = True
        thread.join(30.0)
        sock.close()


def sse_payloads(body: str) -> list[Any]:
    """The `data:` payloads of an SSE body, JSON-decoded; `[DONE]` and undecodable data stay strings."""
    payloads: list[Any] = []
    for event in body.split("\n\n"):
        for line in event.split("\n"):  # SSE lines end at \n only here (never str.splitlines)
            if line.startswith("data: "):
                data = line[len("data: ") :]
                try:
                    payloads.append(json.loads(data))
                except json.JSONDecodeError:
                    payloads.append(data)
    return payloads


def make_app(engine: FakeEngine | None = None, **config: Any) -> Any:
    from refserver.api import AppConfig, create_app
    from refserver.text.tokenizer import ByteTokenizer

    return create_app(engine or FakeEngine(), ByteTokenizer(), AppConfig(**config))
