"""Tokens per content chunk when the server did not count them chunk by chunk.

Computed once, after the stream ended, from what the stream carried: each content chunk's text (kept
by reference while streaming, nothing more), the positions of empty token events (`"content": ""`,
which a server sends for a token whose text it holds back, e.g. part of a UTF-8 character), and the
final usage when there is one. The basis is recorded as the record's `token_source`:

final usage N known (N exact, the split estimated)
- `final_split_by_tokenizer`: the received text tokenized with the run's tokenizer, each token given to
  the chunk in which its text ends, then N apportioned in those proportions;
- `final_split_by_text_length`: no tokenizer: N apportioned in proportion to each chunk's characters;
- `final_only`: no content chunk to split N over.
no usage (N estimated)
- `estimate_tokenizer`: N and the split from tokenizing the received text;
- `estimate_token_events`: no tokenizer: one token per token event, empty ones included (each carried
  to the next content chunk, those after the last one to it);
- `estimate_token_events_tokenizer_low` / `_tokenizer_high`: one token per token event, because the
  tokenizer's count fell below the event count or far above it (`choose_estimate`).

Two facts bound every split. Each token event carries at least one token, so a content chunk carries at
least one, plus one per empty event carried to it (`token_events`), and the event count is a floor for N.
A U+FFFD in the text stands for bytes the server could not decode: the tokenizer would count its three
UTF-8 bytes, so it counts as one token (`text_weights`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from loadgen.workload import TokenCounter
from metrics.records import TokenSource

REPLACEMENT = "\ufffd"
# The tokenizer's count is "far above" the event count beyond both of these: the text then re-tokenizes
# into tokens the server never generated (another vocabulary, undecodable bytes), not several per event.
WIDE_RATIO = 1.5
WIDE_SLACK = 4


def apportion(total: int, weights: Sequence[int]) -> list[int]:
    """`total` split in proportion to `weights` by largest remainder (ties to the earlier index); equal
    weights when they sum to zero. The parts sum to `total` exactly."""
    if not weights:
        return []
    if sum(weights) <= 0:
        weights = [1] * len(weights)
    whole = sum(weights)
    parts = [total * w // whole for w in weights]
    left = total - sum(parts)
    if left:
        remainders = sorted(range(len(weights)), key=lambda i: (-(total * weights[i] % whole), i))
        for i in remainders[:left]:
            parts[i] += 1
    return parts


def apportion_above(total: int, weights: Sequence[int], floors: Sequence[int]) -> list[int]:
    """`total` split in proportion to `weights` with part j at least `floors[j]`: a part that would fall
    below its floor is set to it and the rest is split again over the others, until none falls below
    (the plain `apportion` when none does). When `total` is below the floors' sum (a server counting
    fewer tokens than it sent events) it is split in proportion to the floors."""
    if total < sum(floors):
        return apportion(total, floors)
    parts: list[int | None] = [None] * len(weights)
    while True:
        free = [j for j, part in enumerate(parts) if part is None]
        rest = total - sum(part for part in parts if part is not None)
        if not free:  # every part sits on its floor: what is left goes by the weights
            return [int(part or 0) + extra for part, extra in zip(parts, apportion(rest, weights), strict=True)]
        shares = apportion(rest, [weights[j] for j in free])
        below = [j for j, share in zip(free, shares, strict=True) if share < floors[j]]
        if not below:
            for j, share in zip(free, shares, strict=True):
                parts[j] = share
            return [int(part or 0) for part in parts]
        for j in below:
            parts[j] = floors[j]


def token_events(chunks: int, empty_at: Sequence[int]) -> tuple[list[int], int]:
    """One token per token event. `empty_at[e]` is the number of content chunks seen before empty event
    e. Returns (k_j per chunk, N)."""
    counts = [1] * chunks
    for at in empty_at:
        if chunks:
            counts[min(at, chunks - 1)] += 1
    return counts, chunks + len(empty_at)


def text_weights(pieces: Sequence[str], counter: TokenCounter) -> list[int] | None:
    """Tokens per piece by the run's tokenizer (`TokenCounter.piece_tokens`), each U+FFFD counted as one
    token; None when the counter is no tokenizer."""
    if not any(REPLACEMENT in p for p in pieces):
        return counter.piece_tokens(pieces)
    split = counter.piece_tokens([p.replace(REPLACEMENT, "") for p in pieces])
    if split is None:
        return None
    return [k + p.count(REPLACEMENT) for k, p in zip(split, pieces, strict=True)]


def choose_estimate(by_tokenizer: int, by_events: int) -> TokenSource:
    """Which count stands for N when the server gave none: the tokenizer's, unless it falls below the
    event count (tokens whose bytes never became text: the events are a floor) or far above it (more
    than WIDE_RATIO times and WIDE_SLACK tokens more: the text re-tokenizes into tokens the server did
    not generate), where one token per event is used."""
    if by_tokenizer < by_events:
        return "estimate_token_events_tokenizer_low"
    if by_tokenizer > max(by_events * WIDE_RATIO, by_events + WIDE_SLACK):
        return "estimate_token_events_tokenizer_high"
    return "estimate_tokenizer"


def infer_chunk_tokens(
    texts: Sequence[Any], empty_at: Sequence[int], final_tokens: int | None, counter: TokenCounter | None
) -> tuple[list[int] | None, TokenSource, int, int | None]:
    """(k_j per chunk or None, its basis, N, the tokenizer's count when the estimate weighed it against
    the event count) from a stream's texts (see the module docstring)."""
    pieces = [t if type(t) is str else "" for t in texts]
    split: list[int] | None = None
    if counter is not None and pieces:
        try:
            split = text_weights(pieces, counter)
        except Exception:  # a tokenizer failing on odd text: the record falls back, the client never raises
            split = None
    if split is not None and sum(split) <= 0:
        split = None  # no text to tokenize (e.g. tool calls only)
    floors, events = token_events(len(pieces), empty_at)
    if final_tokens is not None:
        if not pieces:
            return None, "final_only", final_tokens, None
        if split is not None:
            return apportion_above(final_tokens, split, floors), "final_split_by_tokenizer", final_tokens, None
        lengths = [len(p) for p in pieces]
        return apportion_above(final_tokens, lengths, floors), "final_split_by_text_length", final_tokens, None
    if split is None:
        return floors, "estimate_token_events", events, None
    by_tokenizer = sum(split)
    source = choose_estimate(by_tokenizer, events)
    if source != "estimate_tokenizer":
        return floors, source, events, by_tokenizer
    return apportion_above(by_tokenizer, split, floors), source, by_tokenizer, by_tokenizer
