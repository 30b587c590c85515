"""Choosing how the client counts tokens: `words`, `bytes`, or a local tokenizer (see loadgen.workload.text)."""

from __future__ import annotations

from loadgen.workload.text import ByteCounter, TokenCounter, WordCounter


def make_counter(spec: str) -> tuple[str, TokenCounter]:
    """`words`, `bytes` or a path to tokenizer.json → (name, counter). ValueError for a bad path."""
    if spec == "words":
        return "words", WordCounter()
    if spec == "bytes":
        return "bytes", ByteCounter()
    from loadgen.workload.tokenizer_counter import TokenizerCounter

    counter = TokenizerCounter(spec)
    return counter.name, counter
