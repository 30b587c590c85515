"""Three hand-made records of a reasoning model with a tool call (times in ms):

    r0  sent 0 ms; reasons from 10 ms, answers at 110 ms; N = 40, R = 30 (usage); finish stop
    r1  sent 100 ms; answers at 150 ms, no reasoning; N = 10, R = 0 (usage); finish stop
    r2  sent 205 ms (intended 200); reasons from 215 ms; first tool-call delta 515 ms, call complete
        600 ms; N = 50, R = 20 (counted); one tool call; finish tool_calls

By hand: TTFO = 110, 50, 310 ms; reasoning time = 100, -, 300 ms; answer tokens = 10, 10, 30;
TTFT = 10, 50, 10 ms; time to the first tool-call delta 310 ms, to the complete call 395 ms (r2).
"""

from __future__ import annotations

from metrics.records.record import RequestRecord
from tests.metrics._records import MS, rec


def reasoning_records() -> list[RequestRecord]:
    return [
        rec(0, a=0, d=0, chunks=[10, 60, 110, 130], n=40, closed=135, reasoning_ns=10 * MS, answer_ns=110 * MS,
            reasoning_tokens=30, reasoning_tokens_source="usage", finish_reason="stop"),
        rec(1, a=100, d=100, chunks=[150, 170], n=10, closed=175, answer_ns=150 * MS, reasoning_tokens=0,
            reasoning_tokens_source="usage", finish_reason="stop"),
        rec(2, a=200, d=205, chunks=[215, 300, 515, 600], n=50, closed=605, reasoning_ns=215 * MS,
            answer_ns=515 * MS, tool_call_ns=515 * MS, tool_call_done_ns=600 * MS, tool_calls=1,
            reasoning_tokens=20, reasoning_tokens_source="tokenizer", finish_reason="tool_calls"),
    ]
