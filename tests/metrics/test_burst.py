"""Burst-delivered streams: a whole answer read at once has a TPOT of ~0 that must not pass a TPOT bound."""

from __future__ import annotations

from typing import Any

from exporters.console import format_summary
from loadgen.http.send.client import StreamingClient
from loadgen.types import ClientConfig, WorkItem
from metrics.records.record import RequestRecord
from metrics.slo import parse_slo
from metrics.summary.build import SummaryConfig, summarize
from tests.metrics._records import rec
from tests.servers.scripted import (
    DONE,
    END,
    ReceivedRequest,
    ScriptedServer,
    Send,
    chat_chunk,
    chunk,
    event,
    head,
    usage,
)

TOKENS = 40


def test_a_burst_stream_is_counted_and_never_meets_a_tpot_bound() -> None:
    records = [
        rec(0, chunks=[100.0] * 5),  # five one-token chunks read at the same instant: TPOT 0
        rec(1, chunks=[100.0, 100.0, 100.01], k=[1, 1, 1]),  # 10 µs over 2 tokens: still under 10 µs each
        rec(2, chunks=[100.0, 120.0, 140.0]),  # paced: TPOT 20 ms
        rec(3, chunks=[100.0]),  # one token: no TPOT, no verdict on it
    ]
    loose = summarize(records, SummaryConfig(slo=parse_slo(["tpot=50ms"])), {})
    assert loose["burst_delivered"] == {"requests": 2, "of": 3, "share": 2 / 3, "tpot_below_s": 10e-6}
    assert loose["goodput"]["good"] == 2  # the paced stream and the one-token answer
    no_slo = summarize(records, SummaryConfig(), {})
    assert no_slo["goodput"]["good"] == 4  # without a TPOT bound nothing is judged on TPOT
    assert no_slo["latency"]["tpot_s"]["count"] == 3  # still measured as the client saw them


def _vllm(*, burst: bool) -> Any:
    """vLLM with continuous usage: one token per event; a busy host sends the whole stream in one write."""
    def handler(_: ReceivedRequest) -> list[Send]:
        objs = [chat_chunk(role="assistant", content="", usage=usage(9, 0))]
        objs += [chat_chunk(f" w{i}", usage=usage(9, i + 1)) for i in range(TOKENS)]
        objs.append(chat_chunk("", finish_reason="length", usage=usage(9, TOKENS)))
        frames = [chunk(event(o)) for o in objs] + [chunk(DONE) + END]
        if burst:
            return [Send(head()), Send(b"".join(frames), at_s=0.05)]
        return [Send(head()), *(Send(f, at_s=0.002 * i) for i, f in enumerate(frames))]

    return handler


async def _run(handler: Any, n: int) -> list[RequestRecord]:
    async with ScriptedServer(handler) as server, StreamingClient(ClientConfig(base_url=server.url, model="m")) as client:
        return [await client.send(WorkItem(prompt="hi", max_tokens=TOKENS), request_id=i, intended_ns=0,
                                  anchor_ns=0) for i in range(n)]  # concurrency 1


async def test_vllm_streams_sent_in_one_write_are_flagged_and_warned_about() -> None:
    bursts = await _run(_vllm(burst=True), 3)
    paced = await _run(_vllm(burst=False), 1)
    assert all(r.status == "ok" and r.output_tokens == TOKENS for r in bursts + paced)
    summary = summarize(bursts + paced, SummaryConfig(slo=parse_slo(["tpot=50ms"])), {})
    assert summary["burst_delivered"]["requests"] == 3 and summary["burst_delivered"]["of"] == 4
    assert summary["goodput"]["good"] == 1  # only the paced stream shows that it met the TPOT bound
    text = format_summary(summary)
    assert "WARNING: 3 of 4 streams arrived in one burst (output under 10 µs per token" in text
    assert "the TPOT bound counts them as not met" in text
    quiet = format_summary(summarize(paced, SummaryConfig(), {}))
    assert "burst" not in quiet
