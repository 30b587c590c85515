"""Paged attention reads what each sequence holds: decodes over their own contexts, not the batch's longest."""

from __future__ import annotations

import random

import pytest

torch = pytest.importorskip("torch")

from refserver.engine.runner import slot_mapping  # noqa: E402
from refserver.model.attention import (  # noqa: E402
    PagedAttentionMetadata,
    causal_attention,
    decode_slots,
    paged_attention,
)

BLOCK, BLOCKS, HQ, HKV, D = 4, 64, 4, 2, 8


def tables_for(contexts: list[int], rng: random.Random) -> list[list[int]]:
    free = list(range(1, BLOCKS))
    rng.shuffle(free)
    return [[free.pop() for _ in range(-(-c // BLOCK))] for c in contexts]


def metadata(query_lens: list[int], contexts: list[int], tables: list[list[int]]) -> PagedAttentionMetadata:
    width = max(len(t) for t in tables)
    return PagedAttentionMetadata(
        slot_mapping=torch.zeros(0, dtype=torch.long), query_lens=query_lens, context_lens=contexts,
        block_tables=torch.tensor([t + [0] * (width - len(t)) for t in tables], dtype=torch.long),
    )


def test_decode_slots_are_each_sequences_own_positions_and_no_padding() -> None:
    contexts = [3, 21, 9, 1]
    tables = tables_for(contexts, random.Random(1))
    meta = metadata([1, 1, 5, 1], contexts, tables)
    slots = decode_slots(meta, [0, 1, 3], BLOCK)
    want = [s for i in (0, 1, 3) for s in slot_mapping(tables[i], 0, contexts[i], BLOCK)]
    assert slots.tolist() == want
    assert len(want) == 3 + 21 + 1  # Σ context of the decodes, not 3 × 21


def test_a_mixed_batch_equals_each_sequence_attended_alone() -> None:
    """Decodes at different contexts beside two prefill chunks: every output row equals full causal
    attention over that sequence's own keys (GQA: 4 query heads share 2 KV heads)."""
    rng = random.Random(7)
    gen = torch.Generator().manual_seed(7)
    query_lens = [1, 6, 1, 1, 3, 1]
    contexts = [2, 11, 30, 17, 3, 5]
    tables = tables_for(contexts, rng)
    k_cache = torch.zeros(BLOCKS, BLOCK, HKV, D)
    v_cache = torch.zeros(BLOCKS, BLOCK, HKV, D)
    keys = [torch.randn(c, HKV, D, generator=gen) for c in contexts]
    values = [torch.randn(c, HKV, D, generator=gen) for c in contexts]
    for table, c, k, v in zip(tables, contexts, keys, values, strict=True):
        slots = torch.tensor(slot_mapping(table, 0, c, BLOCK))
        k_cache.view(-1, HKV, D)[slots] = k
        v_cache.view(-1, HKV, D)[slots] = v
    queries = [torch.randn(c, HQ, D, generator=gen) for c in contexts]  # a query per position; the last n asked
    q = torch.cat([qs[c - n :] for qs, c, n in zip(queries, contexts, query_lens, strict=True)])
    meta = metadata(query_lens, contexts, tables)

    out = paged_attention(q, k_cache, v_cache, meta, scale=0.3)

    at = 0
    for qs, k, v, c, n in zip(queries, keys, values, contexts, query_lens, strict=True):
        alone = causal_attention(qs, k, v, scale=0.3)[c - n :]
        torch.testing.assert_close(out[at : at + n], alone, rtol=1e-5, atol=1e-6)
        at += n
    assert meta.decode_slots is not None and meta.decode_slots.numel() == 2 + 30 + 17 + 5
