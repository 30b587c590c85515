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
  to the next content chunk, those after the last one to it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from loadgen.workload.text import TokenCounter
from metrics.records.record import TokenSource


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


def token_events(chunks: int, empty_at: Sequence[int]) -> tuple[list[int], int]:
    """One token per token event. `empty_at[e]` is the number of content chunks seen before empty event
    e. Returns (k_j per chunk, N)."""
    counts = [1] * chunks
    for at in empty_at:
        if chunks:
            counts[min(at, chunks - 1)] += 1
    return counts, chunks + len(empty_at)


def infer_chunk_tokens(
    texts: Sequence[Any], empty_at: Sequence[int], final_tokens: int | None, counter: TokenCounter | None
) -> tuple[list[int] | None, TokenSource, int]:
    """(k_j per chunk or None, its basis, N) from a stream's texts (see the module docstring)."""
    pieces = [t if type(t) is str else "" for t in texts]
    split: list[int] | None = None
    if counter is not None and pieces:
        try:
            split = counter.piece_tokens(pieces)
        except Exception:  # a tokenizer failing on odd text: the record falls back, the client never raises
            split = None
    if split is not None and sum(split) <= 0:
        split = None  # no text to tokenize (e.g. tool calls only)
    if final_tokens is not None:
        if not pieces:
            return None, "final_only", final_tokens
        if split is not None:
            return apportion(final_tokens, split), "final_split_by_tokenizer", final_tokens
        return apportion(final_tokens, [len(p) for p in pieces]), "final_split_by_text_length", final_tokens
    if split is not None:
        return split, "estimate_tokenizer", sum(split)
    counts, n = token_events(len(pieces), empty_at)
    return counts, "estimate_token_events", n
