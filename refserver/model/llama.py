"""A Llama-family decoder in plain PyTorch: RMSNorm, RoPE, GQA attention, SwiGLU MLP.

Module and parameter names mirror Hugging Face's (`model.layers.N.self_attn.q_proj.weight`, ...) so a
checkpoint loads by name. `forward` attends over the paged KV cache; `forward_reference` recomputes the
whole sequence with plain causal attention and no cache, for the equivalence tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import nn

from refserver.model.attention import PagedAttentionMetadata, causal_attention, paged_attention, write_kv
from refserver.model.config import check_servable
from refserver.model.rope import RotaryEmbedding, apply_rope

if TYPE_CHECKING:
    from metrics.model import ModelConfig

KVCache = tuple[torch.Tensor, torch.Tensor]


class RMSNorm(nn.Module):
    def __init__(self, size: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Normalise in float32 like the reference implementation, then scale in the model dtype.
        x32 = x.float()
        normed = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * normed.to(x.dtype)


class LlamaMLP(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        h, i, bias = config.hidden_size, config.intermediate_size, config.mlp_bias
        self.gate_proj = nn.Linear(h, i, bias=bias)
        self.up_proj = nn.Linear(h, i, bias=bias)
        self.down_proj = nn.Linear(i, h, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))
        return out


class LlamaAttention(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        d, bias = config.head_dim, config.attention_bias
        self.num_heads, self.num_kv_heads, self.head_dim = config.num_heads, config.num_kv_heads, d
        self.scale = d**-0.5
        self.q_proj = nn.Linear(config.hidden_size, config.num_heads * d, bias=bias)
        self.k_proj = nn.Linear(config.hidden_size, config.num_kv_heads * d, bias=bias)
        self.v_proj = nn.Linear(config.hidden_size, config.num_kv_heads * d, bias=bias)
        self.o_proj = nn.Linear(config.num_heads * d, config.hidden_size, bias=bias)

    def forward(
        self,
        x: torch.Tensor,
        cos_sin: tuple[torch.Tensor, torch.Tensor],
        meta: PagedAttentionMetadata | None,
        kv_cache: KVCache | None,
    ) -> torch.Tensor:
        t = x.shape[0]
        q = self.q_proj(x).view(t, self.num_heads, self.head_dim)
        k = self.k_proj(x).view(t, self.num_kv_heads, self.head_dim)
        v = self.v_proj(x).view(t, self.num_kv_heads, self.head_dim)
        q, k = apply_rope(q, *cos_sin), apply_rope(k, *cos_sin)
        if meta is None or kv_cache is None:
            out = causal_attention(q, k, v, self.scale)
        else:
            write_kv(kv_cache[0], kv_cache[1], k, v, meta.slot_mapping)
            out = paged_attention(q, kv_cache[0], kv_cache[1], meta, self.scale)
        projected: torch.Tensor = self.o_proj(out.reshape(t, self.num_heads * self.head_dim))
        return projected


class LlamaDecoderLayer(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.self_attn = LlamaAttention(config)
        self.post_attention_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.mlp = LlamaMLP(config)

    def forward(
        self,
        x: torch.Tensor,
        cos_sin: tuple[torch.Tensor, torch.Tensor],
        meta: PagedAttentionMetadata | None,
        kv_cache: KVCache | None,
    ) -> torch.Tensor:
        x = x + self.self_attn(self.input_layernorm(x), cos_sin, meta, kv_cache)
        out: torch.Tensor = x + self.mlp(self.post_attention_layernorm(x))
        return out


class LlamaModel(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList([LlamaDecoderLayer(config) for _ in range(config.num_layers)])
        self.norm = RMSNorm(config.hidden_size, config.rms_norm_eps)


class LlamaForCausalLM(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        check_servable(config)
        self.config = config
        self.model = LlamaModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        if config.tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight
        self._rope: RotaryEmbedding | None = None

    def rope(self) -> RotaryEmbedding:
        # Built lazily so it lands on the device the weights were moved to.
        device = self.lm_head.weight.device
        if self._rope is None or self._rope.inv_freq.device != device:
            self._rope = RotaryEmbedding(self.config, device)
        return self._rope

    def forward(
        self,
        input_ids: torch.Tensor,
        positions: torch.Tensor,
        meta: PagedAttentionMetadata | None = None,
        kv_caches: list[KVCache] | None = None,
    ) -> torch.Tensor:
        """Final hidden states [T, D] of the batch's concatenated tokens (normed, before lm_head)."""
        x = self.model.embed_tokens(input_ids)
        cos_sin = self.rope().cos_sin(positions, x.dtype)
        for i, layer in enumerate(self.model.layers):
            x = layer(x, cos_sin, meta, None if kv_caches is None else kv_caches[i])
        normed: torch.Tensor = self.model.norm(x)
        return normed

    def compute_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        logits: torch.Tensor = self.lm_head(hidden)
        return logits

    @torch.inference_mode()
    def forward_reference(self, token_ids: list[int]) -> torch.Tensor:
        """Logits [T, V] of one sequence by full recomputation with plain causal attention, no cache."""
        device = self.lm_head.weight.device
        ids = torch.tensor(token_ids, dtype=torch.long, device=device)
        positions = torch.arange(len(token_ids), device=device)
        return self.compute_logits(self.forward(ids, positions)).float()
