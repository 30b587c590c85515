"""Conversations (`--turns`): each session is a chain of turns, and every turn sends the whole history.

A session's plan (`Session`) says what each turn adds (a user message, with a system prompt on the first
turn where there is one), its `max_tokens`, and the think time that separates it from the previous
turn's answer. What the assistant said is not part of the plan: the runner appends the text it actually
streamed (loadgen.dispatch.conversation), so turn k's prompt is the previous prompt, the previous answer and
the new message, and a prefix-caching server can serve the history from cache.

Session i is a pure function of (seed, i), as a workload item is:
- synthetic: T turns from `--turns` (the same forms as `--prompt-tokens`), each adding a user message
  of `--prompt-tokens` tokens and asking for `--output-tokens`;
- a dataset's conversations (loadgen.workload.conversations), in a seeded shuffled order, each cut to at
  most T turns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from loadgen.seeds import item_rng
from loadgen.types import Message, WorkloadDescription
from loadgen.workload.agent import AgentLoop
from loadgen.workload.bust import CacheBuster
from loadgen.workload.lengths import LengthDist
from loadgen.workload.sources import SyntheticWorkload
from loadgen.workload.text import TokenCounter, fit_text
from loadgen.workload.think import ThinkTime

_SESSION_STREAM = 3_000_017  # seeds sessions apart from single requests of the same index


@dataclass(slots=True)
class Turn:
    messages: list[Message]  # what this turn adds to the conversation
    max_tokens: int | None
    target: int | None  # tokens aimed for in what it adds
    counted: int | None  # the run's counter on what it adds
    think_s: float = 0.0  # wait after the previous turn's answer (0 for the first turn)
    cancel_after_s: float | None = None  # a planned cancellation (loadgen.workload.cancel)
    cancel_after_tokens: int | None = None


@dataclass(slots=True)
class Session:
    turns: list[Turn]
    tags: dict[str, str] = field(default_factory=dict)
    model: str | None = None  # every turn's model (a dataset row's, or drawn from a --model mix)


class SessionWorkload(Protocol):
    @property
    def counter(self) -> TokenCounter: ...

    @property
    def buster(self) -> CacheBuster | None: ...  # --cache-bust: a unique prefix on every turn's request

    def session(self, index: int) -> Session: ...

    def describe(self) -> WorkloadDescription: ...


@dataclass(slots=True)
class SyntheticSessions:
    base: SyntheticWorkload  # lengths, counter, shared-prefix groups and tags of every turn
    turns: LengthDist
    think: ThinkTime
    buster: CacheBuster | None = None
    agent: AgentLoop | None = None  # --tools in a conversation: tool calls answered (loadgen.workload.agent)

    @property
    def counter(self) -> TokenCounter:
        counter = self.base.counter
        assert isinstance(counter, TokenCounter)
        return counter

    def session(self, index: int) -> Session:
        b = self.base
        rng = item_rng(b.seed, _SESSION_STREAM, index)
        count = self.turns.sample_one(rng)
        tags = dict(b.tags)
        prefix = b.group_prefix(rng)
        out: list[Turn] = []
        for k in range(count):
            n_prompt = b.prompt.sample_one(rng)
            n_out = b.output.sample_one(rng)
            think = self.think.sample(rng) if k else 0.0
            text, counted = fit_text(n_prompt, rng, b.counter_name, b.counter)
            messages: list[Message] = [{"role": "user", "content": text}]
            target = n_prompt
            if k == 0 and prefix is not None:
                group, prefix_text, prefix_count = prefix
                messages.insert(0, {"role": "system", "content": prefix_text})
                tags["prefix_group"] = str(group)
                target, counted = target + b.prefix_tokens, counted + prefix_count
            out.append(Turn(messages, n_out, target, counted, think))
        return Session(out, tags)

    def describe(self) -> WorkloadDescription:
        out = self.base.describe()
        out["kind"], out["source"] = "sessions", "synthetic"
        out["turns"], out["think_time"] = str(self.turns), str(self.think)
        if self.buster is not None:
            out["cache_bust"] = True
        return out


@dataclass(slots=True)
class DatasetSessions:
    kind: str
    path: str
    conversations: list[Session]
    seed: int
    turns: LengthDist  # at most this many turns of each conversation
    think: ThinkTime
    default_output: LengthDist  # max_tokens of a turn the file gives none for
    counter: TokenCounter
    buster: CacheBuster | None = None
    agent: AgentLoop | None = None
    _order: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        if not self.conversations:
            raise ValueError(f"{self.path}: no usable conversations in the file")
        self._order = np.random.default_rng(self.seed).permutation(len(self.conversations))

    def session(self, index: int) -> Session:
        base = self.conversations[int(self._order[index % len(self.conversations)])]
        rng = item_rng(self.seed, _SESSION_STREAM, index)
        cap = self.turns.sample_one(rng)
        out = []
        for k, turn in enumerate(base.turns[:cap]):
            max_tokens = turn.max_tokens if turn.max_tokens is not None else self.default_output.sample_one(rng)
            out.append(Turn(turn.messages, max_tokens, turn.target, turn.counted, self.think.sample(rng) if k else 0.0))
        return Session(out, dict(base.tags), base.model)

    def describe(self) -> WorkloadDescription:
        turns = [len(c.turns) for c in self.conversations]
        out: WorkloadDescription = {
            "kind": "sessions", "source": self.kind, "path": self.path,
            "conversations_in_file": len(self.conversations), "turns_in_file": int(sum(turns)),
            "turns": str(self.turns), "think_time": str(self.think), "token_counter": self.counter.name}
        if self.buster is not None:
            out["cache_bust"] = True
        return out
