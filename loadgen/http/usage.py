"""The objects a stream's events carry beside the output, as the accumulators keep them: the usage (chat's
names; the Responses and Messages decoders rebuild theirs in them), the reference server's `goodput`
stamp, llama.cpp's `timings`.

They are the server's JSON, taken as they came: each value is checked where it is read (`type(n) is int`),
once the stream has ended for most of them, so that nothing is built or checked per chunk beyond what
the per-chunk token count needs. Hence the keys are named and the values are `object`.
"""

from __future__ import annotations

from typing import TypedDict


class Usage(TypedDict, total=False):
    prompt_tokens: object
    completion_tokens: object
    prompt_tokens_details: object  # {"cached_tokens": int}
    completion_tokens_details: object  # {"reasoning_tokens": int}


class CachedTokens(TypedDict):
    cached_tokens: object


class ReasoningTokens(TypedDict):
    reasoning_tokens: object


class ServerStamp(TypedDict, total=False):
    """The reference server's `goodput` object: `t` (send time, s) and `n` (tokens) on every content chunk,
    its final figures (`cached_tokens`, ...) beside them on the last event."""

    t: object
    n: object
    cached_tokens: object


class Timings(TypedDict, total=False):
    """llama.cpp's `timings` (its prompt cache hits as `cache_n`)."""

    cache_n: object
