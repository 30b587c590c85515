"""One request's run through the engine: admission, text pieces as they become safe to send, metrics.

`Generation.start()` hands the request to the engine and turns `QueueFullError` into a 429 before any
byte of the response is written. `outputs()` then yields text pieces (UTF-8 and stop-string hold-back
applied) and, last, one `Output` with the finish reason. Whatever way the request ends — finished,
stopped by a stop string, client gone (cancellation), engine failure — the engine request is aborted
if still running and the request is observed once in `/metrics`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass

from refserver.api.detokenize import OutputText
from refserver.api.errors import bad_request, queue_full, server_error
from refserver.api.server_metrics import ServerMetrics
from refserver.api.timing import RequestTimes, decode_s, e2e_s, prefill_s, queue_s
from refserver.engine import AsyncEngine, QueueFullError, SamplingParams, TokenEvent
from refserver.text import Tokenizer

# Event-loop turns given to the engine to refuse a request (QueueFullError) before the response starts.
_ADMISSION_TURNS = 3


@dataclass(slots=True)
class Output:
    text: str
    tokens: int  # output tokens credited to this text (see detokenize.OutputText)
    finish_reason: str | None = None  # set on the last Output only
    reasoning: bool = False  # one of the first `reasoning_tokens` output tokens' text


class Generation:
    def __init__(
        self,
        *,
        engine: AsyncEngine,
        metrics: ServerMetrics,
        tokenizer: Tokenizer,
        request_id: str,
        prompt_ids: list[int],
        params: SamplingParams,
        stop: list[str],
        times: RequestTimes,
        reasoning_tokens: int = 0,
    ) -> None:
        self.engine = engine
        self.metrics = metrics
        self.request_id = request_id
        self.prompt_ids = prompt_ids
        self.params = params
        self.times = times
        # The first `reasoning_tokens` output tokens are reasoning: their own text, no stop strings.
        self.reasoning_tokens = reasoning_tokens
        self.reasoning = OutputText(tokenizer, [])
        self.text = OutputText(tokenizer, stop, min_tokens=max(0, params.min_tokens - reasoning_tokens))
        self._events: AsyncIterator[TokenEvent] | None = None
        self._first: asyncio.Future[TokenEvent] | None = None
        self._observed = False

    async def start(self) -> None:
        """Submit to the engine; raises a 429 `APIError` when its waiting queue is full."""
        try:
            self._events = self.engine.generate(self.request_id, self.prompt_ids, self.params)
        except QueueFullError:
            raise queue_full() from None
        except ValueError as exc:  # the engine's own validation
            raise bad_request(str(exc)) from None
        self._first = asyncio.ensure_future(anext(self._events))
        for _ in range(_ADMISSION_TURNS):
            if self._first.done():
                break
            await asyncio.sleep(0)
        if self._first.done() and not self._first.cancelled():
            refused = self._first.exception()
            if isinstance(refused, QueueFullError):
                raise queue_full()
            if isinstance(refused, ValueError):
                raise bad_request(str(refused))

    async def outputs(self) -> AsyncGenerator[Output, None]:
        if self._events is None or self._first is None:
            raise RuntimeError("Generation.start() must be awaited first")
        reason = "abort"  # what a cancellation (client gone) leaves
        stop_piece = Output("", 0)
        try:
            event = await self._first
            while True:
                answer = None
                for output in self._consume(event):
                    if output.reasoning:
                        if output.text or output.tokens:
                            yield output
                    else:
                        answer = output
                if self.text.stopped:
                    reason, stop_piece = "stop", answer or stop_piece
                    break
                if answer is not None and answer.text:
                    yield answer
                if event.finished:
                    reason = event.finish_reason or "stop"
                    break
                event = await anext(self._events)
        except StopAsyncIteration:
            reason = "error"
            raise server_error("the engine ended the request without a finish event") from None
        except QueueFullError:
            reason = "error"
            raise queue_full() from None
        except Exception as exc:
            reason = "error"
            raise server_error(f"engine failure: {type(exc).__name__}: {exc}", code="engine_error") from exc
        finally:
            # Idempotent for a finished request; frees the blocks of a stopped or abandoned one.
            self.abort()
            self._observe(reason)
        if reason == "error":
            raise server_error("the engine failed this request", code="engine_error")
        if self.times.num_output_tokens < self.reasoning_tokens:  # ended while reasoning
            rest = self.reasoning.finish()
            if rest.text or rest.tokens:
                yield Output(rest.text, rest.tokens, reasoning=True)
        tail = self.text.finish()
        yield Output(stop_piece.text + tail.text, stop_piece.tokens + tail.tokens, reason)

    def _consume(self, event: TokenEvent) -> list[Output]:
        previous_s = self.times.last_token_s if self.times.num_output_tokens else None
        self.times.update(event)
        if not event.new_token_ids:
            return []
        if self.times.num_output_tokens == 0 and event.first_token_s is not None:
            self.metrics.observe_first_token(
                ttft_s=max(0.0, event.first_token_s - self.times.arrival_s), prompt_tokens=event.num_prompt_tokens
            )
        before = self.times.num_output_tokens
        self.times.num_output_tokens += len(event.new_token_ids)
        self.metrics.observe_tokens(count=len(event.new_token_ids), gap_s=self._gap(previous_s, event))
        split = max(0, min(len(event.new_token_ids), self.reasoning_tokens - before))
        outputs: list[Output] = []
        if split:
            self.times.num_reasoning_tokens += split
            piece = self.reasoning.add(event.new_token_ids[:split])
            outputs.append(Output(piece.text, piece.tokens, reasoning=True))
            if before + split == self.reasoning_tokens:  # the last reasoning token: send what was held back
                rest = self.reasoning.finish()
                outputs.append(Output(rest.text, rest.tokens, reasoning=True))
        if split < len(event.new_token_ids):
            piece = self.text.add(event.new_token_ids[split:])
            outputs.append(Output(piece.text, piece.tokens))
        return outputs

    @staticmethod
    def _gap(previous_s: float | None, event: TokenEvent) -> float | None:
        return None if previous_s is None else max(0.0, event.now_s - previous_s)

    def abort(self) -> None:
        """Free the engine's blocks for this request (idempotent)."""
        if self._first is not None and not self._first.done():
            self._first.cancel()
        self.engine.abort(self.request_id)

    def cancel(self) -> None:
        """Abort on the server's own initiative (an injected disconnect), counted as "abort" even when
        `outputs()` never ran."""
        self.abort()
        self._observe("abort")

    def _observe(self, reason: str) -> None:
        if self._observed:
            return
        self._observed = True
        self.metrics.observe_finished(
            reason=reason,
            e2e_s=e2e_s(self.times, time.perf_counter()),
            queue_s=queue_s(self.times),
            prefill_s=prefill_s(self.times),
            decode_s=decode_s(self.times),
            prompt_tokens=self.times.num_prompt_tokens,
            output_tokens=self.times.num_output_tokens,
        )
