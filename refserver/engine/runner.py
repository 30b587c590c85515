"""The torch model runner: turns a ScheduledBatch into tensors, runs the model over the paged cache, samples."""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics.model import ModelConfig
from refserver.engine.runner_base import ScheduledBatch
from refserver.engine.sampling import banned_token_ids, sample
from refserver.model import PagedAttentionMetadata

if TYPE_CHECKING:
    import torch

    from refserver.model import LlamaForCausalLM


def slot_mapping(block_table: list[int], start_pos: int, num_tokens: int, block_size: int) -> list[int]:
    """Flat KV slots of positions start_pos .. start_pos+num_tokens-1 of one sequence."""
    return [block_table[p // block_size] * block_size + p % block_size for p in range(start_pos, start_pos + num_tokens)]


def disable_cudnn_attention() -> None:
    """Keep scaled_dot_product_attention off cuDNN's backend (process-wide) on a CUDA device.

    Every step brings new attention shapes (each prefill chunk's context length, each decode's
    context length), and cuDNN's backend is slow on them (it prepares each new shape): measured on an H200 with
    bfloat16 (bench/step_profile.py, bench/README.md), prefill steps took 4.6-6.3x longer with it (63.9 and
    81.9 ms against 13.0 and 13.9 ms, tiny model, two sessions); decode steps did not differ beyond the
    order the runs came in. Flash / memory-efficient kernels take its place.
    """
    import torch

    torch.backends.cuda.enable_cudnn_sdp(False)


class TorchModelRunner:
    def __init__(self, model: LlamaForCausalLM, *, num_blocks: int, block_size: int, seed: int = 0) -> None:
        import torch

        self.model = model
        self.block_size = block_size
        self._num_blocks = num_blocks
        cfg = model.config
        weight = model.lm_head.weight
        self.device, self.dtype = weight.device, weight.dtype
        # One pool for all layers: [K/V, layer, block, slot in block, kv head, head dim].
        self.kv = torch.zeros(
            2, cfg.num_layers, num_blocks, block_size, cfg.num_kv_heads, cfg.head_dim, dtype=self.dtype, device=self.device
        )
        self.kv_caches = [(self.kv[0, i], self.kv[1, i]) for i in range(cfg.num_layers)]
        self.generator = torch.Generator(device=self.device).manual_seed(seed)
        if self.device.type == "cuda":
            disable_cudnn_attention()


    @property
    def model_config(self) -> ModelConfig:
        return self.model.config

    @property
    def num_blocks(self) -> int:
        return self._num_blocks

    def execute(self, batch: ScheduledBatch) -> list[int]:
        import torch

        if not batch.seqs:
            return []
        input_ids: list[int] = []
        positions: list[int] = []
        slots: list[int] = []
        sample_rows: list[int] = []
        for item in batch.seqs:
            n = len(item.token_ids)
            input_ids.extend(item.token_ids)
            positions.extend(range(item.start_pos, item.start_pos + n))
            slots.extend(slot_mapping(item.block_table, item.start_pos, n, self.block_size))
            if item.sample:
                sample_rows.append(len(input_ids) - 1)
        max_blocks = max(len(item.block_table) for item in batch.seqs)
        tables = [item.block_table + [0] * (max_blocks - len(item.block_table)) for item in batch.seqs]
        dev = self.device
        meta = PagedAttentionMetadata(
            slot_mapping=torch.tensor(slots, dtype=torch.long, device=dev),
            query_lens=[len(item.token_ids) for item in batch.seqs],
            context_lens=[item.context_len for item in batch.seqs],
            block_tables=torch.tensor(tables, dtype=torch.long, device=dev),
        )
        with torch.inference_mode():
            hidden = self.model(
                torch.tensor(input_ids, dtype=torch.long, device=dev),
                torch.tensor(positions, dtype=torch.long, device=dev),
                meta,
                self.kv_caches,
            )
            if not sample_rows:
                return []
            logits = self.model.compute_logits(hidden[torch.tensor(sample_rows, device=dev)])
            return self._sample(batch, logits)

    def _sample(self, batch: ScheduledBatch, logits: torch.Tensor) -> list[int]:
        import torch

        eos = self.model_config.eos_token_ids
        todo = [item.seq for item in batch.seqs if item.sample]
        for seq in todo:
            if seq.generator is None and seq.params.seed is not None:
                seq.generator = torch.Generator(device=self.device).manual_seed(seq.params.seed)
        return sample(
            logits,
            [seq.params for seq in todo],
            [seq.generator or self.generator for seq in todo],
            [banned_token_ids(seq.params, seq.num_output_tokens, eos) for seq in todo],
        )
