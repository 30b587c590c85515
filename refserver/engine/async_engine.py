"""AsyncEngine over LLMEngine: the step loop runs in its own thread, never on the event loop.

The event loop only touches a small lock-protected inbox (adds, aborts) and per-request asyncio
queues; the engine thread drains the inbox at the top of every step and hands each step's events back
with one `loop.call_soon_threadsafe` call. Queue-full is decided on the caller's side from the count of
never-scheduled waiting requests the thread published after its last step, plus those it has taken from
the inbox since, plus the inbox: an upper bound of the true count, so an accepted request is never
refused later.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator

from refserver.engine.llm_engine import LLMEngine
from refserver.engine.types import EngineStats, QueueFullError, RequestEvent, SamplingParams, TokenEvent

log = logging.getLogger(__name__)

_Add = tuple[str, list[int], SamplingParams, float]


class AsyncLLMEngine:
    def __init__(self, engine: LLMEngine) -> None:
        self.engine = engine
        self._cond = threading.Condition()
        self._adds: list[_Add] = []
        self._aborts: list[str] = []
        self._stopping = False
        self._published_new_waiting = 0
        self._drained = 0  # requests taken from the inbox, not yet in the published count
        self._stats = engine.stats()
        self._queues: dict[str, asyncio.Queue[TokenEvent]] = {}  # touched on the event loop only
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def vocab_size(self) -> int:
        return self.engine.vocab_size

    @property
    def eos_token_id(self) -> int | None:
        return self.engine.eos_token_id

    @property
    def max_context(self) -> int:
        return self.engine.max_context

    async def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("engine already started")
        self._loop = asyncio.get_running_loop()
        self._thread = threading.Thread(target=self._run, name="refserver-engine", daemon=True)
        self._thread.start()

    async def stop(self) -> None:
        """Stop the step loop; every request still open ends with an "abort" event."""
        if self._thread is None:
            return
        with self._cond:
            self._stopping = True
            self._cond.notify()
        await asyncio.to_thread(self._thread.join)
        self._thread = None
        now = time.perf_counter()
        leftovers = [(rid, _orphan_event(prompt, arrival, "abort", now)) for rid, prompt, _, arrival in self._adds]
        self._adds.clear()
        # Queued after any delivery the thread scheduled last, so each stream still sees its events in order.
        asyncio.get_running_loop().call_soon(self._deliver, leftovers + self.engine.abort_all("abort"))
        await asyncio.sleep(0)

    def generate(self, request_id: str, prompt_token_ids: list[int], params: SamplingParams) -> AsyncIterator[TokenEvent]:
        """Queue the request now (ValueError if invalid, QueueFullError if full) and stream its events."""
        if self._thread is None:
            raise RuntimeError("call `await engine.start()` before generate()")
        if request_id in self._queues:
            raise ValueError(f"request id {request_id!r} is already in flight")
        self.engine.validate(prompt_token_ids, params)
        queue: asyncio.Queue[TokenEvent] = asyncio.Queue()
        with self._cond:
            queued = self._published_new_waiting + self._drained + len(self._adds)
            if queued >= self.engine.config.max_waiting:
                raise QueueFullError(f"waiting queue is full ({self.engine.config.max_waiting} requests)")
            self._adds.append((request_id, list(prompt_token_ids), params, time.perf_counter()))
            self._cond.notify()
        self._queues[request_id] = queue
        return self._stream(request_id, queue)

    async def _stream(self, request_id: str, queue: asyncio.Queue[TokenEvent]) -> AsyncIterator[TokenEvent]:
        finished = False
        try:
            while not finished:
                event = await queue.get()
                finished = event.finished
                yield event
        finally:
            if not finished:  # the consumer left early (client disconnect): free the request's blocks
                self.abort(request_id)

    def abort(self, request_id: str) -> None:
        with self._cond:
            self._aborts.append(request_id)
            self._cond.notify()

    def stats(self) -> EngineStats:
        return self._stats

    def _run(self) -> None:
        engine = self.engine
        while True:
            with self._cond:
                while not (self._stopping or self._adds or self._aborts or engine.has_unfinished()):
                    self._cond.wait()
                if self._stopping:
                    return
                adds, self._adds = self._adds, []
                aborts, self._aborts = self._aborts, []
                # Out of the inbox but not yet in the published count: still counted until the next publication.
                self._drained = len(adds)
            events: list[RequestEvent] = []
            for rid, prompt, params, arrival in adds:
                try:
                    engine.add_request(rid, prompt, params, arrival)
                except Exception:
                    log.exception("could not add request %s", rid)
                    events.append((rid, _orphan_event(prompt, arrival, "error", time.perf_counter())))
            for rid in aborts:
                abort_event = engine.abort(rid)
                if abort_event is not None:
                    events.append((rid, abort_event))
            try:
                events.extend(engine.step())
            except Exception:
                log.exception("engine step failed; failing every request in flight")
                events.extend(engine.abort_all("error"))
            with self._cond:
                self._published_new_waiting = engine.scheduler.num_new_waiting
                self._drained = 0
                self._stats = engine.stats()
            if events and self._loop is not None:
                try:
                    self._loop.call_soon_threadsafe(self._deliver, events)
                except RuntimeError:  # the event loop is closed; nobody is listening any more
                    return

    def _deliver(self, events: list[RequestEvent]) -> None:
        for rid, event in events:
            queue = self._queues.get(rid)
            if queue is None:
                continue
            queue.put_nowait(event)
            if event.finished:
                del self._queues[rid]


def _orphan_event(prompt: list[int], arrival_s: float, reason: str, now_s: float) -> TokenEvent:
    """The final event of a request that never became a sequence (rejected in the thread, or never run)."""
    return TokenEvent(
        new_token_ids=[],
        finished=True,
        finish_reason="error" if reason == "error" else "abort",
        num_prompt_tokens=len(prompt),
        num_cached_tokens=0,
        arrival_s=arrival_s,
        scheduled_s=None,
        first_token_s=None,
        now_s=now_s,
    )
