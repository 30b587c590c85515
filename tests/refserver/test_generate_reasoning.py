"""The reasoning split inside `Generation`: engine events that carry several tokens across the boundary,
UTF-8 held back at it, and tokens credited so that each side's pieces add up to its own count."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

from refserver.api.generate import Generation, Output
from refserver.api.server_metrics import ServerMetrics
from refserver.api.timing import RequestTimes
from refserver.engine.types import EngineStats, SamplingParams, TokenEvent
from refserver.text.tokenizer import EOS_ID, ByteTokenizer


class ChunkyEngine:
    """Yields the given token-id batches, one engine event each, then finishes with the last."""

    def __init__(self, batches: list[list[int]]) -> None:
        self.batches = batches

    async def generate(self, request_id: str, prompt: list[int], params: SamplingParams) -> AsyncIterator[TokenEvent]:
        start = time.perf_counter()
        for i, ids in enumerate(self.batches):
            last = i == len(self.batches) - 1
            yield TokenEvent(ids, last, "stop" if last else None, len(prompt), 0, start, start, start,
                             time.perf_counter())

    def abort(self, request_id: str) -> None:
        pass

    def stats(self) -> EngineStats:
        return EngineStats(0, 0, 0.0, 1, 1, 0, 0, 0)


async def run(batches: list[list[int]], k: int) -> list[Output]:
    engine = ChunkyEngine(batches)
    metrics = ServerMetrics(model_name="m", max_model_len=64, stats=engine.stats)
    times = RequestTimes(arrival_s=time.perf_counter(), num_prompt_tokens=1)
    generation = Generation(engine=engine, metrics=metrics, tokenizer=ByteTokenizer(), request_id="r",
                            prompt_ids=[1], params=SamplingParams(max_tokens=32), stop=[], times=times,
                            reasoning_tokens=k)
    await generation.start()
    outputs = [o async for o in generation.outputs()]
    assert times.num_reasoning_tokens == min(k, sum(len(b) for b in batches))
    return outputs


def side(outputs: list[Output], reasoning: bool) -> tuple[str, int]:
    chosen = [o for o in outputs if o.reasoning == reasoning]
    return "".join(o.text for o in chosen), sum(o.tokens for o in chosen)


async def test_a_batch_across_the_boundary_is_split_at_k() -> None:
    outputs = await run([list(b"abc"), list(b"defg"), [EOS_ID]], k=5)
    assert side(outputs, True) == ("abcde", 5)
    assert side(outputs, False) == ("fg", 3)  # with eos
    assert outputs[-1].finish_reason == "stop"


async def test_a_character_cut_at_the_boundary_is_flushed_with_the_reasoning() -> None:
    e_acute = list("é".encode())  # two byte tokens
    outputs = await run([list(b"ab"), e_acute[:1], e_acute[1:] + list(b"z"), [EOS_ID]], k=3)
    text, count = side(outputs, True)
    assert (text, count) == ("ab\ufffd", 3)  # reasoning ends inside the character: sent as U+FFFD
    assert side(outputs, False)[1] == 3


async def test_an_output_shorter_than_k_is_all_reasoning() -> None:
    outputs = await run([list(b"ab"), [EOS_ID]], k=8)
    assert side(outputs, True) == ("ab", 3)
    assert side(outputs, False) == ("", 0)
