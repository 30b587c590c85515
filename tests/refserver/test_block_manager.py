"""Block manager: allocation, reference counts, chained hashes, token comparison, LRU reuse."""

from __future__ import annotations

from refserver.engine.block_manager import BlockManager, chain_hash
from refserver.engine.sequence import Sequence
from refserver.engine.types import SamplingParams

BS = 4


def seq_of(tokens: list[int], rid: str = "s") -> Sequence:
    return Sequence.new(rid, tokens, SamplingParams(), 0.0)


def admit(bm: BlockManager, seq: Sequence) -> int:
    """Allocate the whole sequence (cached prefix + fresh blocks) and mark it computed; returns cached tokens."""
    ids, hashes = bm.find_cached_prefix(seq.token_ids)
    bm.allocate(seq, ids, hashes, seq.num_tokens)
    cached = seq.num_computed_tokens
    seq.num_computed_tokens = seq.num_tokens
    bm.cache_full_blocks(seq)
    return cached


def test_allocation_takes_enough_blocks_and_free_returns_them() -> None:
    bm = BlockManager(8, BS)
    seq = seq_of(list(range(9)))  # 9 tokens → 3 blocks of 4
    assert bm.can_allocate([], 9)
    bm.allocate(seq, [], [], 9)
    assert len(seq.block_table) == 3 and len(set(seq.block_table)) == 3
    assert bm.num_free_blocks == 5
    assert all(bm.blocks[b].ref_count == 1 for b in seq.block_table)
    assert bm.usage() == 3 / 8
    assert bm.grow(seq, 13) and len(seq.block_table) == 4
    assert not bm.grow(seq, 13 + 5 * BS)  # would need 5 more, only 4 free
    assert len(seq.block_table) == 4  # a failed grow changes nothing
    bm.free(seq)
    assert bm.num_free_blocks == 8 and seq.block_table == []
    assert all(b.ref_count == 0 for b in bm.blocks)


def test_cannot_allocate_past_the_pool() -> None:
    bm = BlockManager(2, BS)
    assert bm.can_allocate([], 8)
    assert not bm.can_allocate([], 9)


def test_shared_prefix_blocks_are_reference_counted() -> None:
    bm = BlockManager(16, BS)
    a = seq_of([1, 2, 3, 4, 5, 6, 7, 8, 9], "a")
    assert admit(bm, a) == 0
    b = seq_of([1, 2, 3, 4, 5, 6, 7, 8, 42, 43], "b")
    assert admit(bm, b) == 8
    assert b.block_table[:2] == a.block_table[:2]
    assert b.block_table[2] != a.block_table[2]
    assert [bm.blocks[x].ref_count for x in a.block_table[:2]] == [2, 2]
    bm.free(a)
    assert [bm.blocks[x].ref_count for x in b.block_table[:2]] == [1, 1]
    assert bm.num_free_blocks == 16 - 3  # a's private tail block is free, the shared ones are not
    bm.free(b)
    assert bm.num_free_blocks == 16


def test_hashes_are_chained_through_previous_blocks() -> None:
    bm = BlockManager(16, BS)
    a = seq_of([9, 9, 9, 9, 5, 6, 7, 8, 0], "a")
    admit(bm, a)
    h0 = chain_hash(None, (9, 9, 9, 9))
    assert a.block_hashes == [h0, chain_hash(h0, (5, 6, 7, 8))]
    # Same second block after a different first block: no hit at all (the chain differs).
    b = seq_of([1, 1, 1, 1, 5, 6, 7, 8, 0], "b")
    assert bm.find_cached_prefix(b.token_ids) == ([], [])


def test_only_full_computed_blocks_are_cached_and_last_token_is_never_served() -> None:
    bm = BlockManager(16, BS)
    a = seq_of(list(range(8)), "a")  # exactly two full blocks
    admit(bm, a)
    assert len(a.block_hashes) == 2
    # The same 8 tokens again: only the first block may hit, the last token must be computed.
    ids, _ = bm.find_cached_prefix(list(range(8)))
    assert ids == a.block_table[:1]
    partial = seq_of(list(range(6)), "p")
    bm.allocate(partial, [], [], 6)
    partial.num_computed_tokens = 3  # first block not fully computed yet
    bm.cache_full_blocks(partial)
    assert partial.block_hashes == []


def test_hash_collision_does_not_share_blocks() -> None:
    bm = BlockManager(16, BS, hash_fn=lambda prev, tokens: 7)  # every block collides
    a = seq_of([1, 2, 3, 4, 0], "a")
    admit(bm, a)
    b = seq_of([5, 6, 7, 8, 0], "b")
    assert bm.find_cached_prefix(b.token_ids) == ([], [])
    assert admit(bm, b) == 0
    assert set(a.block_table).isdisjoint(b.block_table)
    # b's block now owns the colliding hash, so even a's own tokens miss: a miss is safe, a wrong hit is not.
    assert bm.find_cached_prefix([1, 2, 3, 4, 9]) == ([], [])
    assert bm.find_cached_prefix([5, 6, 7, 8, 9])[0] == b.block_table[:1]


def test_freed_cached_blocks_keep_their_hash_and_are_revived() -> None:
    bm = BlockManager(8, BS)
    a = seq_of([1, 2, 3, 4, 5, 6, 7, 8, 9], "a")
    admit(bm, a)
    head = a.block_table[:2]
    bm.free(a)
    assert bm.num_free_blocks == 8
    b = seq_of([1, 2, 3, 4, 5, 6, 7, 8, 10], "b")
    assert admit(bm, b) == 8
    assert b.block_table[:2] == head
    assert bm.num_free_blocks == 8 - 3


def test_lru_reuse_evicts_least_recently_freed_cached_blocks_first() -> None:
    bm = BlockManager(4, BS)
    old = seq_of([1, 1, 1, 1, 0], "old")
    admit(bm, old)
    bm.free(old)  # 1 cached block, freed first
    new = seq_of([2, 2, 2, 2, 0], "new")
    admit(bm, new)
    bm.free(new)  # 1 cached block, freed later
    # Two more fresh blocks: the uncached free blocks go first, then the oldest cached one.
    filler = seq_of(list(range(100, 111)), "filler")  # 11 tokens → 3 blocks, 2 uncached + 1 cached
    bm.allocate(filler, [], [], 11)
    assert bm.find_cached_prefix([1, 1, 1, 1, 0]) == ([], [])  # the older cache entry was evicted
    ids, _ = bm.find_cached_prefix([2, 2, 2, 2, 0])
    assert len(ids) == 1 and ids[0] not in filler.block_table


def test_revived_block_does_not_count_as_free() -> None:
    bm = BlockManager(3, BS)
    a = seq_of([1, 2, 3, 4, 5, 6, 7, 8, 9], "a")
    admit(bm, a)
    bm.free(a)
    ids, _ = bm.find_cached_prefix([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13])
    assert len(ids) == 2
    # 13 tokens need 4 blocks: 2 revived + 2 fresh, but only 1 block is free besides the revived ones.
    assert not bm.can_allocate(ids, 13)
    assert bm.can_allocate(ids, 12)


def test_disabled_prefix_caching_never_hits() -> None:
    bm = BlockManager(8, BS, enable_prefix_caching=False)
    a = seq_of([1, 2, 3, 4, 5], "a")
    admit(bm, a)
    assert a.block_hashes == []
    assert bm.find_cached_prefix([1, 2, 3, 4, 5]) == ([], [])
