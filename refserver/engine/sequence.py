"""One request's state inside the engine.

Generated vs computed tokens: a sampled token joins `token_ids` at once, but its KV does not
exist until a later step feeds it through the model. So `num_computed_tokens` (positions whose KV is in
the cache) trails `num_tokens` by one during decode, and by the unprocessed prompt during prefill.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

    from refserver.engine.types import FinishReason, SamplingParams


class SequenceStatus(enum.Enum):
    WAITING = "waiting"
    RUNNING = "running"
    FINISHED = "finished"


@dataclass(slots=True, eq=False)
class Sequence:
    request_id: str
    token_ids: list[int]  # prompt followed by every generated token
    num_prompt_tokens: int
    params: SamplingParams
    arrival_s: float
    status: SequenceStatus = SequenceStatus.WAITING
    num_computed_tokens: int = 0  # positions whose KV is in the cache
    block_table: list[int] = field(default_factory=list)
    block_hashes: list[int] = field(default_factory=list)  # chained hashes of the leading full blocks
    num_cached_tokens: int | None = None  # prefix-cache hits of the first admission (what usage reports)
    scheduled_s: float | None = None
    first_token_s: float | None = None
    finish_reason: FinishReason | None = None
    generator: torch.Generator | None = None  # per-request sampling RNG, created by the runner on demand

    @classmethod
    def new(cls, request_id: str, prompt: list[int], params: SamplingParams, arrival_s: float) -> Sequence:
        return cls(request_id, list(prompt), len(prompt), params, arrival_s)

    @property
    def num_tokens(self) -> int:
        return len(self.token_ids)

    @property
    def num_output_tokens(self) -> int:
        return len(self.token_ids) - self.num_prompt_tokens

    @property
    def output_token_ids(self) -> list[int]:
        return self.token_ids[self.num_prompt_tokens :]

    @property
    def num_pending_tokens(self) -> int:
        """Tokens whose KV still has to be computed before the next token can be sampled."""
        return len(self.token_ids) - self.num_computed_tokens

    @property
    def is_finished(self) -> bool:
        return self.status is SequenceStatus.FINISHED

    def append_token(self, token_id: int) -> None:
        self.token_ids.append(token_id)

    def reset_for_recompute(self) -> None:
        """Preemption by recompute: the KV is dropped, every token (generated ones too) is recomputed."""
        self.status = SequenceStatus.WAITING
        self.num_computed_tokens = 0
        self.block_table = []
        self.block_hashes = []
