"""The typed view of summary.json's `tokens` section (metrics.summary.tokens): the run's token counts, how
they were counted, the prompts' accuracy against their targets and the prefix cache's share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from metrics.results.summary_parse import basis, count, int_or_none, number_or_none, text_or_none


@dataclass(frozen=True, slots=True)
class PromptAccuracy:
    """`tokens.prompt_accuracy`: the server's prompt count against the target."""

    count: int | None  # requests compared; None when the document does not say
    mean_error_tokens: float | None
    abs_rel_error_p50: float | None  # the median |P − target| / target

    @classmethod
    def from_json(cls, value: Any) -> PromptAccuracy | None:
        if not isinstance(value, dict):
            return None
        rel = value.get("abs_rel_error")
        return cls(int_or_none(value.get("count")), number_or_none(value.get("mean_error_tokens")),
                   number_or_none(rel.get("p50")) if isinstance(rel, dict) else None)


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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
        )
