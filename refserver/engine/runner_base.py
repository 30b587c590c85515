"""The seam between the scheduler and whatever executes a step (a torch model, or the roofline sim).

Each engine step the scheduler hands the runner one `ScheduledBatch`: for every scheduled sequence, the
token ids whose KV must be computed this step, the position of the first one, the context length once
they are computed, the sequence's KV block table, and whether this step completes the sequence's pending
tokens (the end of a prefill, or a decode step) and so must sample the next token.

Positions `start_pos .. start_pos + len(token_ids) - 1` are written into the KV slots given by the block
table (slot = block_table[p // block_size] * block_size + p % block_size); attention for those queries
covers keys `0 .. context_len - 1` under the causal rule. A prefill may be split over several steps
(chunked prefill), so `sample` is False for every chunk but the last.

`execute` returns exactly one token id per entry with `sample=True`, in batch order. A runner also says
how many KV blocks it can hold (`num_blocks`) and which model it stands for (`model_config`: vocab size,
eos ids, max positions), because the block manager and request validation are built from those.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from metrics.model import ModelConfig
    from refserver.engine.sequence import Sequence


@dataclass(slots=True)
class ScheduledSeq:
    seq: Sequence  # the engine's state object; a runner reads params and may keep its generator there
    token_ids: list[int]  # tokens computed this step (a prefill chunk, or the one decode input token)
    start_pos: int  # position of token_ids[0]; equals the tokens already in the KV cache
    block_table: list[int]
    sample: bool  # this step computes the last pending token, so its logits give the next token

    @property
    def context_len(self) -> int:
        """Tokens in the KV cache once this step is done (what attention reads)."""
        return self.start_pos + len(self.token_ids)

    @property
    def is_prefill(self) -> bool:
        """More than one query token: a prompt chunk or a recompute after preemption."""
        return len(self.token_ids) > 1


@dataclass(slots=True)
class ScheduledBatch:
    seqs: list[ScheduledSeq] = field(default_factory=list)
    # Decode steps run without a ScheduledSeq (the virtual engine's fast decode, refserver.engine.fast_decode):
    # how many, and the KV tokens they read. Always 0 for a runner that computes tokens.
    quiet_decodes: int = 0
    quiet_kv: int = 0

    @property
    def num_tokens(self) -> int:
        return sum(len(s.token_ids) for s in self.seqs)

    @property
    def num_samples(self) -> int:
        return sum(1 for s in self.seqs if s.sample)

    def __len__(self) -> int:
        return len(self.seqs)


class ModelRunner(Protocol):
    """Executes one scheduled batch. Implementations: `runner.TorchModelRunner`, `sim_runner` (roofline)."""

    @property
    def model_config(self) -> ModelConfig: ...

    @property
    def num_blocks(self) -> int:
        """KV blocks this runner holds (the block manager's pool size)."""
        ...

    def execute(self, batch: ScheduledBatch) -> list[int]:
        """Compute the batch's KV and return one sampled token per `sample=True` entry, in order."""
        ...
