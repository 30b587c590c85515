"""`--cache-bust`: a unique prefix on every request, so that no prompt can be served from a prefix cache.

The prefix (the request's own key, then a run token drawn at random when the run starts) goes in front
of the first message's content. A new run token per run keeps a second run on the same server cold as well,
so prompts are reproducible except for it. What a chat template writes before the first message is the
same on every request: a server may still serve that from cache (at most the template's leading tokens,
rounded down to its block size: none on the reference server, whose template adds two tokens).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field, replace
from typing import Any

from loadgen.types import Message, WorkItem, WorkloadDescription
from loadgen.workload.text import Counter


@dataclass(slots=True)
class CacheBuster:
    counter: Counter
    run_token: str = field(default_factory=lambda: secrets.token_hex(6))

    def prefix(self, key: str) -> str:
        # The request's key first, ended by a character no key holds: two prefixes differ within the first
        # few tokens, so not even a prompt's first cache block is shared.
        return f"{key}:{self.run_token} "

    def apply(self, item: WorkItem, key: str) -> WorkItem:
        """`item` with the unique prefix in front of its first message (and of its completions prompt)."""
        nonce = self.prefix(key)
        extra = self.counter(nonce)
        messages: list[Message] | None = None
        if item.messages:
            first = item.messages[0]
            content = first.get("content")
            if isinstance(content, list):  # OpenAI content parts: the prefix as a text part in front
                messages = [{**first, "content": [{"type": "text", "text": nonce}, *content]}, *item.messages[1:]]
            else:
                messages = [{**first, "content": nonce + (content if isinstance(content, str) else "")},
                            *item.messages[1:]]
        prompt = nonce + item.prompt if item.prompt is not None else None
        return replace(item, messages=messages, prompt=prompt,
                       prompt_tokens_target=_plus(item.prompt_tokens_target, extra),
                       prompt_tokens_counted=_plus(item.prompt_tokens_counted, extra))


def _plus(value: int | None, extra: int) -> int | None:
    return value + extra if value is not None else None


@dataclass(slots=True)
class BustedWorkload:
    """Any workload of single requests, with `CacheBuster`'s prefix on each."""

    inner: Any  # loadgen.workload.sources.Workload
    buster: CacheBuster

    def item(self, index: int) -> WorkItem:
        return self.buster.apply(self.inner.item(index), str(index))

    def describe(self) -> WorkloadDescription:
        inner: WorkloadDescription = self.inner.describe()
        out = inner.copy()
        out["cache_bust"] = True
        return out
