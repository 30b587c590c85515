"""The typed view of summary.json's `tokens` section (metrics.summary.tokens): the run's token counts, how
they were counted, the prompts' accuracy against their targets and the prefix cache's share."""

from __future__ import annotations

from dataclasses import field
from typing import Any

from metrics.results.frozen_view import frozen
from metrics.results.summary_parse import (
    Json,
    JsonObject,
    basis,
    count,
    int_or_none,
    number_or_none,
    text_or_none,
)


@frozen
class Spread:
    """`{mean, p50, p99}` of a prompt-length error (nulls when nothing was compared)."""

    mean: float | None = None
    p50: float | None = None
    p99: float | None = None

    @classmethod
    def from_json(cls, value: Any) -> Spread | None:
        if not isinstance(value, dict):
            return None
        return cls(*(number_or_none(value.get(k)) for k in ("mean", "p50", "p99")))

    def to_json(self) -> JsonObject:
        return {"mean": self.mean, "p50": self.p50, "p99": self.p99}


@frozen
class PromptAccuracy:
    """`tokens.prompt_accuracy`: the server's prompt count against the target."""

    count: int | None  # requests compared; None when the document does not say
    mean_error_tokens: float | None
    abs_error_tokens: Spread | None = None  # |P − target|
    abs_rel_error: Spread | None = None  # |P − target| / target
    later_turns: PromptAccuracy | None = None  # a conversation's later turns (present only in runs with them)
    image_requests: int | None = None  # requests left out for their images (present only when some were)

    @property
    def abs_rel_error_p50(self) -> float | None:
        """The median |P − target| / target."""
        return self.abs_rel_error.p50 if self.abs_rel_error is not None else None

    @classmethod
    def from_json(cls, value: Any) -> PromptAccuracy | None:
        if not isinstance(value, dict):
            return None
        return cls(int_or_none(value.get("count")), number_or_none(value.get("mean_error_tokens")),
                   Spread.from_json(value.get("abs_error_tokens")), Spread.from_json(value.get("abs_rel_error")),
                   cls.from_json(value.get("later_turns")), int_or_none(value.get("image_requests")))

    def to_json(self) -> JsonObject:
        out: JsonObject = {"count": self.count, "mean_error_tokens": self.mean_error_tokens,
                           "abs_error_tokens": _spread(self.abs_error_tokens),
                           "abs_rel_error": _spread(self.abs_rel_error)}
        if self.later_turns is not None:
            out["later_turns"] = self.later_turns.to_json()
        if self.image_requests is not None:
            out["image_requests"] = self.image_requests
        return out


def _spread(value: Spread | None) -> Json:
    return value.to_json() if value is not None else None


@frozen
class PrefixCacheShare:
    """`tokens.prefix_cache`: the prompt tokens served from the server's cache (zeros when absent)."""

    requests: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    cached_ratio: float | None = None

    @classmethod
    def from_json(cls, value: Any) -> PrefixCacheShare:
        if not isinstance(value, dict):
            return cls()
        return cls(count(value.get("requests")), count(value.get("prompt_tokens")),
                   count(value.get("cached_tokens")), number_or_none(value.get("cached_ratio")))

    def to_json(self) -> JsonObject:
        return {"requests": self.requests, "prompt_tokens": self.prompt_tokens, "cached_tokens": self.cached_tokens,
                "cached_ratio": self.cached_ratio}


@frozen
class Tokens:
    requests: int | None = None  # None when the document does not say
    output_estimated: int = 0
    prompt_estimated: int = 0
    image_requests: int = 0
    cached_unknown: int = 0
    token_source: str | dict[str, int] | None = None
    output_estimate_basis: str | dict[str, int] | None = None
    itl_token_basis: str | None = None
    itl_token_bases: str | dict[str, int] | None = None
    prompt_accuracy: PromptAccuracy | None = None
    prefix_cache: PrefixCacheShare = field(default_factory=PrefixCacheShare)
    output_tokens: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    prompt_unknown: int = 0

    @classmethod
    def from_json(cls, tokens: Any) -> Tokens:
        if not isinstance(tokens, dict):
            return cls()
        return cls(
            requests=int_or_none(tokens.get("requests")),
            output_estimated=count(tokens.get("output_estimated")),
            prompt_estimated=count(tokens.get("prompt_estimated")),
            image_requests=count(tokens.get("image_requests")),
            cached_unknown=count(tokens.get("cached_unknown")),
            token_source=basis(tokens.get("token_source")),
            output_estimate_basis=basis(tokens.get("output_estimate_basis")),
            itl_token_basis=text_or_none(tokens.get("itl_token_basis")),
            itl_token_bases=basis(tokens.get("itl_token_bases")),
            prompt_accuracy=PromptAccuracy.from_json(tokens.get("prompt_accuracy")),
            prefix_cache=PrefixCacheShare.from_json(tokens.get("prefix_cache")),
            output_tokens=count(tokens.get("output_tokens")),
            prompt_tokens=count(tokens.get("prompt_tokens")),
            cached_tokens=count(tokens.get("cached_tokens")),
            prompt_unknown=count(tokens.get("prompt_unknown")),
        )

    def to_json(self) -> JsonObject:
        """As metrics.summary.tokens writes it (every key, in its order)."""
        return {
            "requests": self.requests, "output_tokens": self.output_tokens, "prompt_tokens": self.prompt_tokens,
            "cached_tokens": self.cached_tokens, "output_estimated": self.output_estimated,
            "prompt_estimated": self.prompt_estimated, "prompt_unknown": self.prompt_unknown,
            "image_requests": self.image_requests, "cached_unknown": self.cached_unknown,
            "token_source": self.token_source, "output_estimate_basis": self.output_estimate_basis,
            "itl_token_basis": self.itl_token_basis, "itl_token_bases": self.itl_token_bases,
            "prompt_accuracy": self.prompt_accuracy.to_json() if self.prompt_accuracy is not None else None,
            "prefix_cache": self.prefix_cache.to_json(),
        }
