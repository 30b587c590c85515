"""The paged KV pool's bookkeeping: fixed-size blocks, a free list, and the prefix cache.

Prefix caching: once a block is full and its KV computed, it is registered under a chained hash of
(previous block's hash, its token ids), so equal hashes mean equal prefixes up to collisions; lookups
compare the stored token ids as well, so a collision never shares a block. Blocks are reference
counted; a block whose count drops to zero joins the free list but keeps its hash, so a later request
can revive it, until allocation reuses it (least recently freed first).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from metrics.model import blocks_for_tokens
from refserver.engine.sequence import Sequence

HashFn = Callable[[int | None, tuple[int, ...]], int]


def chain_hash(prev_hash: int | None, token_ids: tuple[int, ...]) -> int:
    """Hash of a full block given the hash of the block before it (None for the first block)."""
    return hash((prev_hash, token_ids))


@dataclass(slots=True)
class Block:
    block_id: int
    ref_count: int = 0
    hash: int | None = None  # set only while the block is registered in the prefix cache
    token_ids: tuple[int, ...] = ()


class BlockManager:
    def __init__(
        self, num_blocks: int, block_size: int, *, enable_prefix_caching: bool = True, hash_fn: HashFn = chain_hash
    ) -> None:
        if num_blocks < 1 or block_size < 1:
            raise ValueError(f"need num_blocks >= 1 and block_size >= 1, got {num_blocks}, {block_size}")
        self.block_size = block_size
        self.enable_prefix_caching = enable_prefix_caching
        self._hash_fn = hash_fn
        self.blocks = [Block(i) for i in range(num_blocks)]
        # Front = next to be reused. Uncached blocks go to the front, cached ones to the back (LRU).
        self._free: OrderedDict[int, None] = OrderedDict.fromkeys(range(num_blocks))
        self._cached: dict[int, int] = {}  # hash -> block id

    @property
    def hash_fn(self) -> HashFn:
        return self._hash_fn

    @property
    def num_total_blocks(self) -> int:
        return len(self.blocks)

    @property
    def num_free_blocks(self) -> int:
        return len(self._free)

    def usage(self) -> float:
        """Fraction of blocks held by some sequence (free cached blocks count as free)."""
        return 1.0 - len(self._free) / len(self.blocks)

    def find_cached_prefix(self, token_ids: list[int]) -> tuple[list[int], list[int]]:
        """Block ids and hashes of the longest cached run of leading full blocks.

        The last token is never served from cache: its logits are needed to sample the next token.
        """
        if not self.enable_prefix_caching:
            return [], []
        ids: list[int] = []
        hashes: list[int] = []
        prev: int | None = None
        bs = self.block_size
        hash_fn = None if self._hash_fn is chain_hash else self._hash_fn  # the default inline: no call per block
        for i in range((len(token_ids) - 1) // bs):
            tokens = tuple(token_ids[i * bs : (i + 1) * bs])
            h = hash((prev, tokens)) if hash_fn is None else hash_fn(prev, tokens)
            block_id = self._cached.get(h)
            if block_id is None or self.blocks[block_id].token_ids != tokens:
                break
            ids.append(block_id)
            hashes.append(h)
            prev = h
        return ids, hashes

    def can_allocate(self, cached_ids: list[int], num_tokens: int) -> bool:
        """Whether a sequence reusing `cached_ids` can hold `num_tokens` positions."""
        fresh = blocks_for_tokens(num_tokens, self.block_size) - len(cached_ids)
        revived = sum(1 for b in cached_ids if self.blocks[b].ref_count == 0) if cached_ids else 0
        return len(self._free) - revived >= fresh

    def allocate(self, seq: Sequence, cached_ids: list[int], cached_hashes: list[int], num_tokens: int) -> None:
        """Give a sequence with no blocks the cached prefix plus fresh blocks up to `num_tokens` positions."""
        if seq.block_table:
            raise RuntimeError(f"sequence {seq.request_id} already holds blocks")
        if not self.can_allocate(cached_ids, num_tokens):
            raise RuntimeError("allocate() called without can_allocate()")
        for block_id in cached_ids:
            block = self.blocks[block_id]
            if block.ref_count == 0:
                del self._free[block_id]
            block.ref_count += 1
        seq.block_table = list(cached_ids)
        seq.block_hashes = list(cached_hashes)
        seq.num_computed_tokens = len(cached_ids) * self.block_size
        self._take(seq.block_table, -(-num_tokens // self.block_size) - len(cached_ids))

    def grow(self, seq: Sequence, num_tokens: int) -> bool:
        """Make the block table cover `num_tokens` positions; False (and no change) if blocks ran out."""
        need = -(-num_tokens // self.block_size) - len(seq.block_table)  # blocks_for_tokens, inline
        if need > len(self._free):
            return False
        self._take(seq.block_table, need)
        return True

    def append_block(self, seq: Sequence) -> None:
        """One more block at the end of the sequence's table (grow by one block; a free one must exist)."""
        self._take(seq.block_table, 1)

    def _take(self, table: list[int], n: int) -> None:
        """Append the next `n` free blocks (front first) to a block table, evicting their cached content."""
        pop, blocks, cached = self._free.popitem, self.blocks, self._cached
        for _ in range(n):
            block_id = pop(last=False)[0]
            block = blocks[block_id]
            h = block.hash
            if h is not None:  # evict its cached content
                if cached.get(h) == block_id:
                    del cached[h]
                block.hash, block.token_ids = None, ()
            block.ref_count = 1
            table.append(block_id)

    def cache_full_blocks(self, seq: Sequence) -> None:
        """Register the sequence's newly completed blocks (full, and KV computed) in the prefix cache."""
        if not self.enable_prefix_caching:
            return
        bs, hashes = self.block_size, seq.block_hashes
        start, end = len(hashes), seq.num_computed_tokens // bs
        if start >= end:
            return
        token_ids, table, cached, blocks = seq.token_ids, seq.block_table, self._cached, self.blocks
        hash_fn = None if self._hash_fn is chain_hash else self._hash_fn  # the default inline: no call per block
        prev = hashes[-1] if hashes else None
        for i in range(start, end):
            tokens = tuple(token_ids[i * bs : (i + 1) * bs])
            h = prev = hash((prev, tokens)) if hash_fn is None else hash_fn(prev, tokens)
            hashes.append(h)
            existing = cached.get(h)
            if existing is not None and blocks[existing].token_ids == tokens:
                continue  # same content already cached (computed concurrently); keep the first copy
            block = blocks[table[i]]
            block.hash, block.token_ids = h, tokens
            cached[h] = block.block_id

    def free(self, seq: Sequence) -> None:
        """Drop the sequence's references; blocks at zero become reusable, cached ones kept as long as possible."""
        # Tail first, so that a prompt's deeper blocks are evicted before its shared head.
        blocks, free = self.blocks, self._free
        front = free.move_to_end
        for block_id in reversed(seq.block_table):
            block = blocks[block_id]
            block.ref_count -= 1
            if not block.ref_count:
                free[block_id] = None
                if block.hash is None:
                    front(block_id, last=False)
        seq.block_table = []
        seq.block_hashes = []
