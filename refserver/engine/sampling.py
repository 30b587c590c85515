"""Next-token choice from logits: greedy at temperature 0, else temperature, top-k, top-p and a draw.

A request with a seed draws from its own `torch.Generator`, so it samples the same tokens whatever
else shares its batches; unseeded requests share the runner's generator.
"""

from __future__ import annotations

from collections.abc import Sequence as Seq
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

    from refserver.engine.types import SamplingParams


def banned_token_ids(params: SamplingParams, num_output_tokens: int, eos_token_ids: Seq[int]) -> list[int]:
    """Tokens that may not be sampled yet: eos and stop ids while fewer than min_tokens were generated."""
    if num_output_tokens >= params.min_tokens:
        return []
    return sorted({*eos_token_ids, *params.stop_token_ids})


def apply_top_k(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Keep the k largest logits of a row (ties at the k-th value are kept); 0 or -1 means off."""
    if k <= 0 or k >= logits.shape[-1]:
        return logits
    kth = logits.topk(k).values[-1]
    return logits.masked_fill(logits < kth, float("-inf"))


def apply_top_p(logits: torch.Tensor, p: float) -> torch.Tensor:
    """Keep the smallest set of most likely tokens whose probability reaches p (always the top one)."""
    import torch

    if p >= 1.0:
        return logits
    sorted_logits, order = logits.sort(descending=True)
    probs = sorted_logits.softmax(-1)
    mass_before = probs.cumsum(-1) - probs
    drop_sorted = mass_before >= p
    drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
    return logits.masked_fill(drop, float("-inf"))


def sample_row(logits: torch.Tensor, params: SamplingParams, generator: torch.Generator | None) -> int:
    """One token from a float32 logits row [V], following the request's sampling parameters."""
    import torch

    if params.temperature == 0:
        return int(logits.argmax())
    scaled = apply_top_p(apply_top_k(logits / params.temperature, params.top_k), params.top_p)
    probs = scaled.softmax(-1)
    return int(torch.multinomial(probs, 1, generator=generator))


def sample(
    logits: torch.Tensor,
    params: list[SamplingParams],
    generators: list[torch.Generator | None],
    banned: list[list[int]],
) -> list[int]:
    """Tokens for a batch of rows [N, V]; `banned[i]` are ids row i may not produce."""
    logits = logits.float()
    for i, ids in enumerate(banned):
        if ids:
            logits[i, ids] = float("-inf")
    greedy = logits.argmax(-1).tolist()  # one device sync for every greedy row at once
    return [
        int(greedy[i]) if p.temperature == 0 else sample_row(logits[i], p, generators[i])
        for i, p in enumerate(params)
    ]
