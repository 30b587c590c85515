"""Console notes on how output tokens were counted where the run's tokenizer and the stream disagreed
(loadgen.http.chunk_tokens.choose_estimate): which count was used, and why."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the summary's view is imported where a summary is read, not at start-up
    from metrics.results import Tokens


# output_estimate_basis keys (metrics.summary.tokens) for one token per event chosen over the tokenizer
_WHY = {
    "one_token_per_event_tokenizer_low": "the tokenizer counted fewer tokens than the stream's token events"
                                         " (tokens whose bytes never became text): the events are a floor",
    "one_token_per_event_tokenizer_high": "the tokenizer counted far more tokens than the stream's token events"
                                          " (text that re-tokenizes into tokens the server did not send, e.g."
                                          " another model's tokenizer)",
}


def tokenizer_disagreement(tokens: Tokens) -> str | None:
    """One line when some requests' N is one token per event although a tokenizer was given."""
    basis = tokens.output_estimate_basis
    if not isinstance(basis, dict):
        return None
    parts = [f"{n} request{'s' if n != 1 else ''}: {why}" for key, why in _WHY.items()
             if (n := basis.get(key, 0)) > 0]
    if not parts:
        return None
    return ("note: output tokens counted as one per token event, not by the tokenizer, for " + "; for ".join(parts)
            + " (records.jsonl keeps both: output_tokens_by_events, output_tokens_by_tokenizer)")
