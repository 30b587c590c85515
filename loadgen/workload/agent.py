"""Agent loops in conversations: a turn whose answer is a tool call is followed, after the tool's latency,
by the tool's result and the model's next turn, up to `--max-tool-turns` times per user turn.

`--tool-latency DIST` (the forms of `--think-time`) is how long the tool takes; `--tool-result-tokens DIST`
(a length distribution) how long its result is: random text of that many tokens by the run's counter, one
result per call. Both are drawn from the seed, the session, its turn and the tool turn, so a rerun sends the
same loop. The tool turn's request carries the whole history: the assistant's turn with the calls as they
were streamed, then one `tool` message per call (each API's body converts them to its own form).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from loadgen.seeds import item_rng
from loadgen.types import Message, ToolCall
from loadgen.workload.lengths import LengthDist
from loadgen.workload.text import TokenCounter, fit_text
from loadgen.workload.think import ThinkTime

_AGENT_STREAM = 4_000_037  # seeds tool results apart from sessions and single requests
DEFAULT_MAX_TOOL_TURNS = 4
DEFAULT_RESULT_TOKENS = 64
TOOL_TURN_TAGS = {"turn_kind": "tool"}  # what a tool turn's record is tagged with (its own bucket)


@dataclass(frozen=True, slots=True)
class AgentLoop:
    latency: ThinkTime = field(default_factory=ThinkTime)
    result_tokens: LengthDist = field(default_factory=lambda: LengthDist("fixed", float(DEFAULT_RESULT_TOKENS)))
    max_tool_turns: int = DEFAULT_MAX_TOOL_TURNS
    seed: int = 0

    def step(self, session: int, turn: int, tool_turn: int, calls: list[ToolCall],
             counter: TokenCounter) -> tuple[float, list[Message], int]:
        """(the tool's latency in seconds, one `tool` message per call, the results' tokens by the counter)."""
        rng = item_rng(self.seed, _AGENT_STREAM, session, turn, tool_turn)
        latency = self.latency.sample(rng)
        results: list[Message] = []
        counted = 0
        for call in calls:
            text, tokens = fit_text(self.result_tokens.sample_one(rng), rng, counter.name, counter)
            results.append({"role": "tool", "tool_call_id": call["id"], "content": text})
            counted += tokens
        return latency, results, counted


def assistant_turn(answer: str, calls: list[ToolCall]) -> Message:
    """The assistant's turn in the history: its text, and its tool calls when it made any."""
    if not calls:
        return {"role": "assistant", "content": answer}
    return {"role": "assistant", "content": answer or None, "tool_calls": calls}
